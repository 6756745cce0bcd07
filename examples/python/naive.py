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

import sys

from pymongo import MongoClient

from lab_contract import consume, consumer_config, logger, settings
from usage_rules import USAGE, compute_delta, worth_saving

STATE = "state"
log = logger("consumer-usage (python, naive)")


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

    def handle(msg, value):
        key = value["sensor_id"]
        if key in last_state:
            delta = compute_delta(last_state[key], value)
            if worth_saving(delta):
                if not anonymous:
                    delta["partition"], delta["offset"] = msg.partition(), msg.offset()
                usage_col.insert_one(delta)
        last_state[key] = value
        save_checkpoint(state_col, key, value)

    log("started: group", cfg["group"], "topic", cfg["topic"], "checkpoints", len(last_state))
    return consume(consumer_config(cfg), cfg["topic"], handle, log)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
