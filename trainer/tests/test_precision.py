"""CPU precision defaults: TRL's bf16 default is turned off for a CPU run on a CPU without native bfloat16, and a
user's own choice (bf16 or fp16 given) is kept; TRL's real configs take the result; a machine with no GPU trains on
the CPU."""

from __future__ import annotations

from quarry_trainer.train.precision import cpu_fallback, cpu_has_native_bf16, cpu_precision

PLAIN = "processor\t: 0\nflags\t\t: fpu sse2 avx2 fma\n"
AMX = "processor\t: 0\nflags\t\t: fpu avx2 avx512f avx512_bf16 amx_bf16\n"


def test_native_bf16_is_read_from_the_cpu_flags():
    assert not cpu_has_native_bf16(PLAIN)
    assert cpu_has_native_bf16(AMX)
    assert not cpu_has_native_bf16("")


def test_a_cpu_run_without_native_bf16_trains_in_float32():
    assert cpu_precision({"use_cpu": True}, PLAIN) == {"use_cpu": True, "bf16": False}


def test_gpu_runs_native_cpus_and_explicit_choices_are_left_alone():
    assert cpu_precision({"use_cpu": False}, PLAIN) == {"use_cpu": False}
    assert cpu_precision({}, PLAIN) == {}
    assert cpu_precision({"use_cpu": True}, AMX) == {"use_cpu": True}
    assert cpu_precision({"use_cpu": True, "bf16": True}, PLAIN) == {"use_cpu": True, "bf16": True}
    assert cpu_precision({"use_cpu": True, "fp16": True}, PLAIN) == {"use_cpu": True, "fp16": True}


def test_trls_configs_default_to_bf16_and_accept_the_cpu_setting(tmp_path):
    from trl import GRPOConfig, SFTConfig

    for cls in (SFTConfig, GRPOConfig):
        assert cls(output_dir=str(tmp_path), use_cpu=True).bf16 is True, f"{cls.__name__}'s bf16 default changed"
        assert cls(**cpu_precision({"output_dir": str(tmp_path), "use_cpu": True}, PLAIN)).bf16 is False


def test_no_gpu_trains_on_the_cpu_and_says_so(capsys):
    assert cpu_fallback({"bf16": True}, accelerator=False) == {"bf16": True, "use_cpu": True}
    assert "no GPU found" in capsys.readouterr().err
    assert cpu_fallback({}, accelerator=True) == {}
    assert cpu_fallback({"use_cpu": True}, accelerator=True) == {"use_cpu": True}
    assert capsys.readouterr().err == ""
