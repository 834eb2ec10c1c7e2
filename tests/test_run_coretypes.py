"""tests/run_coretypes.py picks a second OpenBLAS core type the CPU can execute."""

from __future__ import annotations

from pathlib import Path

from _scripts import load_script

rc = load_script("tests/run_coretypes.py")


def test_choose_never_forces_a_core_type_the_cpu_lacks():
    assert rc.choose({"avx", "avx2", "avx512f"}, "Haswell") == "SkylakeX"
    assert rc.choose({"avx", "avx2", "avx512f"}, "SkylakeX") == "Haswell"
    assert rc.choose({"avx", "avx2"}, "Haswell") == "Sandybridge"
    assert rc.choose({"avx", "avx2"}, "Zen") == "Haswell"
    assert rc.choose({"avx2"}, "haswell") is None  # no avx flag: Sandybridge is not forced
    assert rc.choose(set(), "Haswell") is None


def test_every_listed_sensitive_module_exists():
    root = Path(__file__).resolve().parents[1]
    missing = [t for t in rc.SENSITIVE if not (root / t).exists()]
    assert not missing, missing


def test_cpu_flags_reads_proc_cpuinfo():
    info = Path("/proc/cpuinfo")
    text = info.read_text() if info.exists() else ""
    line = next((ln for ln in text.splitlines() if ln.startswith("flags")), None)
    expected = set(line.split(":", 1)[1].split()) if line else set()
    assert rc.cpu_flags() == expected
