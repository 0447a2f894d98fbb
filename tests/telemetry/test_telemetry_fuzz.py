"""The telemetry parsers fed mutated tool output: a record or an SsdlabError, never another
exception (a KeyError, an OverflowError, pydantic's ValidationError would reach the user as
a traceback, or stop a run over one odd field)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssdlab.errors import SsdlabError
from ssdlab.telemetry.nvme import FEATURES, parse_feature, parse_id_ctrl, parse_smart_log
from ssdlab.telemetry.smartctl import parse_report
from tests.telemetry_data import GOLDEN

FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

PARSERS: dict[str, Callable[[str], object]] = {
    "id-ctrl": parse_id_ctrl, "smart-log": parse_smart_log, "smartctl": parse_report}
# the hand-written outputs, the real programs' (real/) and real drives' from other projects (public/)
JSON_GOLDENS = sorted((p.name, p.read_text()) for p in GOLDEN.glob("**/*.json") if p.name != "expected.json")
FEATURE_GOLDENS = sorted((int(re.search(r"0x[0-9a-f]{2}", p.name).group(), 16), p.read_text())
                         for p in GOLDEN.glob("**/*get-feature*.txt"))

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(-(1 << 140), 1 << 140),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
    st.sampled_from(["123", "123.000000", "123,000000", "12.5", "-1", "0x10", " 7 ", "9" * 60, "", "1e400", "NaN",
                     "178,037,231", "2.000", "1\u202f000"]),
    # nvme-cli 2.11's critical warning: an object, fresh each time (a mutation may change it)
    st.fixed_dictionaries({"value": st.integers(0, 255)}, optional={"ro": st.integers(0, 1)}))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                      max_leaves=6)


def parser_for(name: str) -> Callable[[str], object]:
    return next(parse for key, parse in PARSERS.items() if key in name)


def paths(node, prefix=()):
    """Every place in a JSON document: keys of objects, indexes of lists."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in items:
        yield (*prefix, key)
        yield from paths(child, (*prefix, key))


def must_be_record_or_error(parse: Callable[[str], object], text: str) -> None:
    try:
        parse(text)
    except SsdlabError:
        pass


@st.composite
def mutated_json(draw):
    name, text = draw(st.sampled_from(JSON_GOLDENS))
    doc = json.loads(text)
    for _ in range(draw(st.integers(1, 4))):
        places = list(paths(doc))
        *parents, last = draw(st.sampled_from(places))
        node = doc
        for key in parents:
            node = node[key]
        if draw(st.booleans()) and isinstance(node, dict):
            del node[last]
        else:
            node[last] = draw(values)
    return name, json.dumps(doc)


@FAST
@given(mutated_json())
def test_mutated_json_gives_a_record_or_an_ssdlab_error(case):
    name, text = case
    must_be_record_or_error(parser_for(name), text)


@FAST
@given(st.sampled_from(JSON_GOLDENS), st.data())
def test_cut_or_garbled_json_gives_a_record_or_an_ssdlab_error(golden, data):
    name, text = golden
    at = data.draw(st.integers(0, len(text)))
    garbled = text[:at] + data.draw(st.text(max_size=8)) + text[at + data.draw(st.integers(0, 20)):]
    must_be_record_or_error(parser_for(name), garbled)


@FAST
@given(st.sampled_from(FEATURE_GOLDENS), st.data())
def test_mutated_feature_text_gives_a_record_or_an_ssdlab_error(golden, data):
    fid, text = golden
    fid = data.draw(st.sampled_from([fid, *FEATURES]))  # its own feature more often than another, to reach the decoding
    at = data.draw(st.integers(0, len(text)))
    insert = data.draw(st.one_of(st.text(max_size=12), st.from_regex(r"[0-9a-fx]{1,12}", fullmatch=True),
                                 st.just("\tIdle Transition Power State   (ITPS): 99\n")))
    text = text[:at] + insert + text[at + data.draw(st.integers(0, 12)):]
    must_be_record_or_error(lambda t: parse_feature(fid, t), text)
