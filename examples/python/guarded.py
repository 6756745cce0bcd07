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

import sys

from pymongo import MongoClient
from pymongo.errors import DuplicateKeyError

from lab_contract import consume, consumer_config, logger, settings
from usage_rules import USAGE, compute_delta, worth_saving

CHECKPOINTS = "checkpoints"


log = logger("consumer-usage (python, guarded)")


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
    log("started: group", cfg["group"], "topic", cfg["topic"], "checkpoints", len(guarded.state))
    # Offsets are stored by hand, after both writes of their message.
    config = consumer_config(cfg, **{"enable.auto.offset.store": False})
    return consume(config, cfg["topic"], guarded.handle, log, on_assign=guarded.load)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
