"""The patient controller: the kernels and the reference model agree on it everywhere, and
it does what it says."""

from reconsim import run_cell
from reconsim.controllers import resolve
from reconsim.testing import check_controller

# A restart at 10 s makes it forget the six copies it created at 0 s, still 60 s from the
# ledger: it creates six more, and a surplus of six shows once all twelve are listed.
FORGETFUL = {"G": 60, "U": 15, "B": 5, "desired": 6, "restart_at": (10,)}


def test_the_kernels_agree_with_the_reference_model():
    assert check_controller("patient", examples=50) == 50


def test_it_is_known_by_its_short_name():
    assert resolve("patient").identity == "patient@1.0"


def test_with_no_patience_it_decides_as_intent_does():
    assert run_cell(controller="patient", patience=0, **FORGETFUL) == run_cell(
        controller="intent", **FORGETFUL)


def test_patience_trades_wasted_deletes_for_surplus_copy_seconds():
    hasty = run_cell(controller="patient", patience=0, **FORGETFUL)
    patient = run_cell(controller="patient", patience=3, **FORGETFUL)
    assert patient["deleted"] == hasty["deleted"] == 6
    assert patient["delete_commands"] < hasty["delete_commands"]
    assert patient["excess_copy_seconds"] > hasty["excess_copy_seconds"]


def test_a_surplus_shorter_than_its_patience_is_never_deleted():
    kept = run_cell(controller="patient", patience=1000, **FORGETFUL)
    assert kept["delete_commands"] == 0
    assert kept["overshoot"] == 6
