"""A sweep's variants as given: a grid in the order given, a list from TOML or CSV, seeded
random samples; at most MAX_VARIANTS, none twice, every value of its key's type."""

from __future__ import annotations

import pytest

from ssdlab.distributed.overrides import PresetKeys
from ssdlab.distributed.specs import MAX_VARIANTS, SweepSpec
from ssdlab.errors import SsdlabError
from ssdlab.presets import load_preset

KEYS = PresetKeys.of(load_preset("wd-sn850-1tb"))
SHARE, DIES, FOLD = "drive.cache.max_cell_share", "drive.geometry.dies_per_channel", "drive.cache.idle_fold"


def test_a_grid_is_every_combination_the_first_key_changing_slowest():
    spec = SweepSpec(sets=("cache.max_cell_share=0.3,0.5,0.7", "drive.geometry.dies_per_channel=4,8"))
    assert spec.variants(KEYS) == [{SHARE: s, DIES: d} for s in (0.3, 0.5, 0.7) for d in (4, 8)]
    assert spec.document() == {"set": list(spec.sets)}


def test_a_list_of_variants_from_toml_with_nested_and_dotted_keys(tmp_path):
    path = tmp_path / "variants.toml"
    path.write_text('[[variants]]\ncache.max_cell_share = 0.3\ngeometry.dies_per_channel = 8\n\n'
                    '[[variants]]\n"drive.cache.idle_fold" = false\n\n'
                    '[[variants]]\n[variants.cache]\nmax_cell_share = 1\n')
    assert SweepSpec(variants_file=path).variants(KEYS) == [{SHARE: 0.3, DIES: 8}, {FOLD: False}, {SHARE: 1.0}]


def test_a_list_of_variants_from_csv_each_cell_of_its_keys_type(tmp_path):
    path = tmp_path / "variants.csv"
    path.write_text("cache.max_cell_share, geometry.dies_per_channel,cache.idle_fold\n0.3,4,true\n\n0.5,8,false\n")
    assert SweepSpec(variants_file=path).variants(KEYS) == [{SHARE: 0.3, DIES: 4, FOLD: True},
                                                            {SHARE: 0.5, DIES: 8, FOLD: False}]


@pytest.mark.parametrize("name, text, says", [
    ("v.toml", "[[variants]]\ncache.max_cel_share = 0.3\n", "variant 1 of {path}: cache.max_cel_share is not a key"),
    ("v.toml", "[[variants]]\ncache.max_cell_share = 0.3\n[[variants]]\ngeometry.dies_per_channel = 8.0\n",
     "variant 2 of {path}: drive.geometry.dies_per_channel is an integer, not a number (8.0)"),
    ("v.toml", "[[variants]]\n", "variant 1 of {path} sets nothing"),
    ("v.toml", "[drive]\nname = 1\n", "holds [[variants]] tables of overrides and nothing else"),
    ("v.toml", "[[variants]]\ncache.max_cell_share = 0.3\n\"drive.cache.max_cell_share\" = 0.5\n",
     "drive.cache.max_cell_share is set twice"),
    ("v.toml", "variants = [", "is not valid TOML"),
    ("v.csv", "", "is empty"),
    ("v.csv", "cache.max_cell_share\n0.3\n0.3\n", "variants 1 and 2 are the same drive"),
    ("v.csv", "cache.max_cell_share,geometry.dies_per_channel\n0.3\n", "line 2 of {path} has 1 values for 2 keys"),
    ("v.csv", "cache.max_cell_share,cache.max_cell_share\n0.3,0.4\n", "names drive.cache.max_cell_share twice"),
    ("v.csv", "geometry.dies_per_channel\n4\nfour\n", "line 3 of {path}: drive.geometry.dies_per_channel is an "
                                                      "integer"),
    ("v.txt", "x", "must end in .toml"),
])
def test_a_bad_list_is_refused_saying_where(tmp_path, name, text, says):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(SsdlabError) as refused:
        SweepSpec(variants_file=path).variants(KEYS)
    assert says.format(path=path) in str(refused.value)


def test_seeded_samples_are_the_same_for_a_seed_within_their_ranges_and_typed():
    spec = SweepSpec(ranges=("cache.max_cell_share=0.2..0.9", "geometry.dies_per_channel=2..8"), samples=50, seed=7)
    first = spec.variants(KEYS)
    assert first == spec.variants(KEYS)  # the same seed, the same variants
    assert first != SweepSpec(ranges=spec.ranges, samples=50, seed=8).variants(KEYS)
    assert len(first) == 50
    for variant in first:
        assert 0.2 <= variant[SHARE] <= 0.9 and type(variant[SHARE]) is float
        assert variant[SHARE] == float(f"{variant[SHARE]:.4g}")  # its name says it exactly
        assert 2 <= variant[DIES] <= 8 and type(variant[DIES]) is int
    assert {v[DIES] for v in first} == set(range(2, 9))  # both ends reached
    assert spec.document() == {"sample": list(spec.ranges), "samples": 50, "seed": 7}


@pytest.mark.parametrize("spec, says", [
    (SweepSpec(), "give the variants"),
    (SweepSpec(sets=("cache.max_cell_share=0.3",), ranges=("cache.max_cell_share=0.1..0.2",), samples=2),
     "--set and --sample each give a whole sweep"),
    (SweepSpec(sets=("cache.max_cell_share=0.3",), samples=2), "--samples and --seed go with --sample"),
    (SweepSpec(sets=("cache.max_cell_share",)), "--set 'cache.max_cell_share': give KEY=V1,V2,..."),
    (SweepSpec(sets=("cache.max_cell_share=",)), "give KEY=V1,V2,..."),
    (SweepSpec(sets=("cache.max_cell_share=0.3,,0.5",)), "drive.cache.max_cell_share has an empty value"),
    (SweepSpec(sets=("cache.max_cell_share=0.3,0.30",)), "gives 0.3 twice"),
    (SweepSpec(sets=("cache.max_cell_share=0.3", "drive.cache.max_cell_share=0.5")),
     "--set gives drive.cache.max_cell_share twice"),
    (SweepSpec(sets=tuple(f"{k}={','.join(map(str, range(1, 12)))}" for k in
                          ("geometry.channels", "geometry.dies_per_channel", "geometry.planes_per_die"))),
     f"--set gives 1331 variants: a sweep has at most {MAX_VARIANTS}"),
    (SweepSpec(ranges=("cache.max_cell_share=0.1..0.2",)), "--sample needs --samples N"),
    (SweepSpec(ranges=("cache.max_cell_share=0.1..0.2",), samples=MAX_VARIANTS + 1),
     f"--samples must be 1 to {MAX_VARIANTS}"),
    (SweepSpec(ranges=("cache.max_cell_share=0.1..0.2",), samples=2, seed=-1), "--seed must be 0 to"),
    (SweepSpec(ranges=("cache.max_cell_share=0.5..0.2",), samples=2), "the range 0.5..0.2 is empty"),
    (SweepSpec(ranges=("cache.max_cell_share=0.5",), samples=2), "needs a range LOW..HIGH"),
    (SweepSpec(ranges=("cache.policy=a..b",), samples=2), "--sample draws numbers, and drive.cache.policy is not"),
    (SweepSpec(ranges=("geometry.dies_per_channel=2..3",), samples=5), "5 samples of these ranges repeat a variant"),
])
def test_a_bad_spec_is_refused_before_any_variant_is_made(spec, says):
    with pytest.raises(SsdlabError) as refused:
        spec.variants(KEYS)
    assert says in str(refused.value)


def test_the_same_drive_in_another_order_is_a_duplicate(tmp_path):
    path = tmp_path / "v.toml"
    path.write_text("[[variants]]\ncache.max_cell_share = 0.3\ncache.idle_fold = true\n"
                    "[[variants]]\ncache.idle_fold = true\ncache.max_cell_share = 0.3\n")
    with pytest.raises(SsdlabError, match=r"variants 1 and 2 are the same drive, "
                                          r"wd-sn850-1tb\[cache.idle_fold=true,cache.max_cell_share=0.3\]"):
        SweepSpec(variants_file=path).variants(KEYS)
