"""An age as users write it (`--age 2000pe`, `80%`, `400TBW`) and as a step carries it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from ssdlab.model import Age, Op, Phase, Step
from ssdlab.model.steps import AgeUnit


@pytest.mark.parametrize(("text", "value", "unit"), [
    ("2000pe", 2000, AgeUnit.PE), (" 2000 PE ", 2000, AgeUnit.PE), ("80%", 80, AgeUnit.PERCENT),
    ("12.5 %", 12.5, AgeUnit.PERCENT), ("400TBW", 400, AgeUnit.TBW), ("0tbw", 0, AgeUnit.TBW),
])
def test_the_three_forms_parse_and_print_back(text, value, unit):
    age = Age.parse(text)
    assert (age.value, age.unit) == (value, unit)
    assert Age.parse(str(age)) == age


@pytest.mark.parametrize("text", ["", "2000", "pe", "-5pe", "nan%", "inf TBW", "1e8pe", "2000 cycles", "80%%"])
def test_anything_else_is_refused_with_the_forms_it_takes(text):
    with pytest.raises(ValueError, match="2000pe .* 80% .* 400TBW"):
        Age.parse(text)


@given(st.text(max_size=30))
def test_any_text_parses_or_is_refused_cleanly(text):
    try:
        age = Age.parse(text)
    except ValueError:
        return
    assert 0 <= age.value <= 1e7


def test_an_age_step_and_only_one_carries_an_age():
    base = dict(label="age", rw=Op.TRIM, bs=4096, size=4096)
    step = Step(**base, phase=Phase.AGE, age=Age.parse("50%"))
    assert step.describe() == "age the drive to 50%"
    with pytest.raises(ValidationError, match="an age step, and only one, has an age"):
        Step(**base, phase=Phase.AGE)
    with pytest.raises(ValidationError, match="an age step, and only one, has an age"):
        Step(**base, age=Age.parse("50%"))
    with pytest.raises(ValidationError, match="an age step has no rate"):
        Step(**base, phase=Phase.AGE, age=Age.parse("50%"), rate_iops=10)
