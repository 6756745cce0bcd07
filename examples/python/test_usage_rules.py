import pytest

from lab_contract import settings
from usage_rules import compute_delta, decode, round2, utc_date, worth_saving


def reading(sensor, ts, hours, km):
    return {"sensor_id": sensor, "timestamp": ts, "odometry": {"hours_tot": hours, "km_tot": km}}


# Vectors printed by the audit's own rule (Go: math.Round(v*100)/100) for
# these float64 values: where Python's round() rounds half to even (0.125 to
# 0.12) or a float lands just under a half, the two must agree.
@pytest.mark.parametrize(
    "value,want",
    [
        (0.125, 0.13),
        (0.135, 0.14),
        (2.675, 2.68),
        (-0.125, -0.13),
        (0.10000000000013642, 0.1),
        (0.005, 0.01),
        (0.015, 0.02),
        (1.005, 1),
        (9350.34, 9350.34),
        (0.004999999999999999, 0),
        (1e-09, 0),
    ],
)
def test_round2_is_the_audits(value, want):
    assert round2(value) == want


def test_delta_is_the_seeds():
    d = compute_delta(reading("s1", 1764806400000, 100.0, 50.0), reading("s1", 1764806405000, 100.1, 50.17))
    assert d == {"sensor_id": "s1", "date": "2025-12-04", "delta_hours": 0.1, "delta_km": 0.17}
    assert worth_saving(d)
    assert not worth_saving({"delta_hours": 0.0, "delta_km": 0.0})


def test_date_is_utc():
    assert utc_date(1764806399999) == "2025-12-03"
    assert utc_date(1764806400000) == "2025-12-04"


@pytest.mark.parametrize(
    "value",
    [b"not json", b"{}", b'{"sensor_id": 7, "timestamp": 1, "odometry": {"hours_tot": 1, "km_tot": 1}}',
     b'{"sensor_id": "s", "timestamp": 1, "odometry": {"hours_tot": "1", "km_tot": 1}}',
     b'{"sensor_id": "s", "timestamp": 1.5, "odometry": {"hours_tot": 1, "km_tot": 1}}',
     b'{"sensor_id": "s", "timestamp": 1, "odometry": {"hours_tot": NaN, "km_tot": 1}}'],
)
def test_decode_refuses_what_is_not_a_reading(value):
    assert decode(value) is None


def test_decode_takes_a_reading():
    assert decode(b'{"sensor_id": "s", "timestamp": 1, "odometry": {"hours_tot": 1, "km_tot": 2.5}, "position": {}}')


def test_settings_name_what_is_missing():
    with pytest.raises(SystemExit, match="KAFKA_GROUP, MONGO_URI"):
        settings({"KAFKA_BROKER": "b", "KAFKA_TOPIC": "t"})
    with pytest.raises(SystemExit, match="no database"):
        settings({"KAFKA_BROKER": "b", "KAFKA_TOPIC": "t", "KAFKA_GROUP": "g", "MONGO_URI": "mongodb://h:1"})
    assert settings({"KAFKA_BROKER": "b", "KAFKA_TOPIC": "t", "KAFKA_GROUP": "g", "MONGO_URI": "mongodb://h:1/mine?x=1"})["database"] == "mine"
