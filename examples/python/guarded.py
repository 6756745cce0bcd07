"""consumer-usage that applies each message's effect at most once, and
every message's effect, whatever crashes.

The same checkpoint per sensor and fixed group as naive.py, with three
changes:
  1. a usage record's _id is its message (topic/partition/offset), so
     writing it again after a crash is refused by the store, not counted;
  2. the checkpoint carries its message's partition and offset: a message
     at or before it on the same partition is already applied and
     skipped, and a checkpoint never moves back (a consumer thawed after
     its partitions moved on cannot undo the next owner's work);
  3. an offset is committed only after both writes of its message (the
     background commit takes only offsets stored by hand), so a crash
     reads again what it had not finished, never skips it.
Checkpoints are read again at every assignment: another instance may
have moved them while this one did not own the partition.

    KAFKA_BROKER=... KAFKA_TOPIC=... KAFKA_GROUP=... MONGO_URI=.../db python guarded.py
"""

import os
import signal
import sys

from confluent_kafka import Consumer, KafkaException
from pymongo import MongoClient
from pymongo.errors import DuplicateKeyError

from usage_rules import USAGE, compute_delta, decode, settings, worth_saving

CHECKPOINTS = "checkpoints"


def log(*words):
    print("consumer-usage (python, guarded):", *words, file=sys.stderr, flush=True)


class Guarded:
    def __init__(self, cfg, db):
        self.topic = cfg["topic"]
        self.usage, self.checkpoints = db[USAGE], db[CHECKPOINTS]
        self.state = {}

    def load(self):
        self.state = {doc["_id"]: doc for doc in self.checkpoints.find({})}

    def applied(self, sensor, partition, offset):
        cp = self.state.get(sensor)
        return cp is not None and cp["partition"] == partition and offset <= cp["offset"]

    def record(self, delta, partition, offset):
        delta.update(_id="%s/%d/%d" % (self.topic, partition, offset), partition=partition, offset=offset)
        try:
            self.usage.insert_one(delta)
        except DuplicateKeyError:
            log("p%d@%d: its record is already saved" % (partition, offset))

    def checkpoint(self, sensor, partition, offset, message):
        doc = {"partition": partition, "offset": offset, "message": message}
        newer = {"$or": [{"partition": {"$ne": partition}}, {"offset": {"$lt": offset}}]}
        try:
            self.checkpoints.update_one({"_id": sensor, **newer}, {"$set": doc}, upsert=True)
        except DuplicateKeyError:
            # A checkpoint at or after this message is stored: another
            # instance went on while this one was away. Take it.
            self.state[sensor] = self.checkpoints.find_one({"_id": sensor})
            return
        self.state[sensor] = {"_id": sensor, **doc}

    def handle(self, msg, value):
        sensor, partition, offset = value["sensor_id"], msg.partition(), msg.offset()
        if self.applied(sensor, partition, offset):
            return
        cp = self.state.get(sensor)
        if cp is not None:
            delta = compute_delta(cp["message"], value)
            if worth_saving(delta):
                self.record(delta, partition, offset)
        self.checkpoint(sensor, partition, offset, value)


def main(argv):
    cfg = settings()
    db = MongoClient(cfg["mongo_uri"], serverSelectionTimeoutMS=10000)[cfg["database"]]
    guarded = Guarded(cfg, db)
    guarded.load()
    config = {
        "bootstrap.servers": cfg["broker"],
        "group.id": cfg["group"],
        "auto.offset.reset": "latest",
        # A member killed with -9 holds its partitions until its session
        # times out: 6 s (not the default 45) lets a restart take them
        # back within seconds, as the lab's own consumer-usage does.
        "session.timeout.ms": 6000,
        "heartbeat.interval.ms": 1000,
        # A join waits for every member up to this long: one killed
        # while the group rebalanced would hold it for the default 5
        # minutes on the embedded broker. The loop polls every 0.5 s.
        "max.poll.interval.ms": 10000,
        "enable.auto.commit": True,
        "enable.auto.offset.store": False,
    }
    instance = os.environ.get("KAFKA_GROUP_INSTANCE_ID")
    if instance:
        # Static membership: a restart takes its partitions back at once
        # instead of waiting out the killed member's session.
        config["group.instance.id"] = instance
    consumer = Consumer(config)
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    consumer.subscribe([cfg["topic"]], on_assign=lambda *_: guarded.load())
    log("started: group", cfg["group"], "topic", cfg["topic"], "checkpoints", len(guarded.state))
    try:
        while not stopping:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            if msg.error():
                log("kafka:", msg.error())
                continue
            value = decode(msg.value())
            if value is None:
                log("skipped p%d@%d: not a reading" % (msg.partition(), msg.offset()))
            else:
                guarded.handle(msg, value)
            consumer.store_offsets(msg)
    except KafkaException as err:
        log("kafka:", err)
        return 1
    finally:
        consumer.close()
        log("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
