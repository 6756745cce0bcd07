"""What the lab hands a consumer-usage, and the consuming loop both
examples share: the environment, the consumer's settings, SIGTERM as a
graceful stop.
"""

import os
import signal
import sys
from urllib.parse import urlparse

from confluent_kafka import Consumer, KafkaException

from usage_rules import decode


def settings(environ=None):
    """What the lab hands a consumer-usage in its environment.

    KAFKA_BROKER, KAFKA_TOPIC, KAFKA_GROUP and MONGO_URI (with the
    database in its path). A missing one is an error that names it.
    """
    environ = os.environ if environ is None else environ
    missing = [k for k in ("KAFKA_BROKER", "KAFKA_TOPIC", "KAFKA_GROUP", "MONGO_URI") if not environ.get(k)]
    if missing:
        raise SystemExit("missing environment: " + ", ".join(missing) + " (docs/your-consumer.md)")
    database = urlparse(environ["MONGO_URI"]).path.lstrip("/")
    if not database:
        raise SystemExit("MONGO_URI names no database (mongodb://HOST:PORT/DATABASE)")
    return {
        "broker": environ["KAFKA_BROKER"],
        "topic": environ["KAFKA_TOPIC"],
        "group": environ["KAFKA_GROUP"],
        "mongo_uri": environ["MONGO_URI"],
        "database": database,
    }


def consumer_config(cfg, **extra):
    """The consumer's settings: the lab's group from latest, and sessions
    short enough that a restart after kill -9 gets its partitions back."""
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
    config.update(extra)
    return config


def consume(config, topic, handle, log, on_assign=None):
    """Read topic until SIGTERM: handle(msg, reading) for each reading
    (a record that is not one is said on stderr and passed over).
    Returns the exit status."""
    consumer = Consumer(config)
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    if on_assign is None:
        consumer.subscribe([topic])
    else:
        consumer.subscribe([topic], on_assign=lambda *_: on_assign())
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
                handle(msg, value)
            if config.get("enable.auto.offset.store") is False:
                consumer.store_offsets(msg)
    except KafkaException as err:
        log("kafka:", err)
        return 1
    finally:
        consumer.close()
        log("stopped")
    return 0


def logger(name):
    """A log function that prefixes name, on stderr, flushed."""
    return lambda *words: print(name + ":", *words, file=sys.stderr, flush=True)
