"""The seed article's usage rule, shared by the two example consumers.

Pure functions only (no Kafka, no MongoDB), so the tests can check them
without a broker. The rounding is the lab's: half away from zero on the
float difference, as Go's math.Round(x*100)/100, not Python's round()
(which rounds half to even and would differ from the audit by a cent).
"""

import json
import math
import os
from datetime import datetime, timezone
from urllib.parse import urlparse

USAGE = "usage"


def round2(value):
    """Round to 2 decimals, half away from zero (the audit's rule)."""
    scaled = value * 100
    whole = math.trunc(scaled)
    if abs(scaled - whole) >= 0.5:
        whole += math.copysign(1.0, scaled)
    return whole / 100


def utc_date(timestamp_ms):
    """The UTC day of an epoch-milliseconds timestamp, YYYY-MM-DD."""
    return datetime.fromtimestamp(timestamp_ms / 1000, tz=timezone.utc).strftime("%Y-%m-%d")


def compute_delta(previous, current):
    """The seed's compute_delta: current minus previous, rounded."""
    return {
        "sensor_id": current["sensor_id"],
        "date": utc_date(current["timestamp"]),
        "delta_hours": round2(current["odometry"]["hours_tot"] - previous["odometry"]["hours_tot"]),
        "delta_km": round2(current["odometry"]["km_tot"] - previous["odometry"]["km_tot"]),
    }


def worth_saving(delta):
    """The seed saves a delta only when hours or km grew."""
    return delta["delta_hours"] > 0 or delta["delta_km"] > 0


def decode(value):
    """A message value as a dict, or None when it is not a reading.

    A reading has a string sensor_id, an integer timestamp and numeric
    odometry counters; anything else is skipped (and said on stderr).
    """
    try:
        msg = json.loads(value)
        odo = msg["odometry"]
        ok = (
            isinstance(msg["sensor_id"], str)
            and msg["sensor_id"] != ""
            and isinstance(msg["timestamp"], int)
            and all(isinstance(odo[k], (int, float)) and math.isfinite(odo[k]) for k in ("hours_tot", "km_tot"))
        )
    except (ValueError, TypeError, KeyError):
        return None
    return msg if ok else None


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
