"""The seed article's usage rule, shared by the two example consumers.

Pure functions only (no Kafka, no MongoDB), so the tests can check them
without a broker. The rounding is the lab's: half away from zero on the
float difference, as Go's math.Round(x*100)/100, not Python's round()
(which rounds half to even and would differ from the audit by a cent).
"""

import json
import math
from datetime import datetime, timezone

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
