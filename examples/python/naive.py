"""consumer-usage as the seed article writes it: naive on purpose.

A checkpoint per sensor in MongoDB, a fixed group reading from latest,
offsets committed automatically in the background, and each message's
effect in two writes: the usage record, then the checkpoint. A crash
between them, or after the background commit and before the writes,
counts a delta twice or never. The lab's grade shows which.

    KAFKA_BROKER=... KAFKA_TOPIC=... KAFKA_GROUP=... MONGO_URI=.../db python naive.py [--anonymous]

--anonymous leaves out each record's partition and offset (the seed's
schema alone): the lab then infers the causes of a drift instead of
naming them.
"""

import os
import signal
import sys

from confluent_kafka import Consumer, KafkaException
from pymongo import MongoClient

from usage_rules import USAGE, compute_delta, decode, settings, worth_saving

STATE = "state"


def log(*words):
    print("consumer-usage (python, naive):", *words, file=sys.stderr, flush=True)


def load_state(state_col):
    return {doc["sensor_id"]: doc for doc in state_col.find({}, {"_id": 0})}


def save_checkpoint(state_col, sensor_id, message):
    state_col.update_one({"sensor_id": sensor_id}, {"$set": message}, upsert=True)


def main(argv):
    anonymous = "--anonymous" in argv[1:]
    cfg = settings()
    db = MongoClient(cfg["mongo_uri"], serverSelectionTimeoutMS=10000)[cfg["database"]]
    usage_col, state_col = db[USAGE], db[STATE]
    last_state = load_state(state_col)
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
    }
    instance = os.environ.get("KAFKA_GROUP_INSTANCE_ID")
    if instance:
        # Static membership: a restart takes its partitions back at once
        # instead of waiting out the killed member's session.
        config["group.instance.id"] = instance
    consumer = Consumer(config)
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    consumer.subscribe([cfg["topic"]])
    log("started: group", cfg["group"], "topic", cfg["topic"], "checkpoints", len(last_state))
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
                continue
            key = value["sensor_id"]
            if key in last_state:
                delta = compute_delta(last_state[key], value)
                if worth_saving(delta):
                    if not anonymous:
                        delta["partition"], delta["offset"] = msg.partition(), msg.offset()
                    usage_col.insert_one(delta)
            last_state[key] = value
            save_checkpoint(state_col, key, value)
    except KafkaException as err:
        log("kafka:", err)
        return 1
    finally:
        consumer.close()
        log("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
