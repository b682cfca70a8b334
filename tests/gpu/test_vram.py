"""The VRAM estimate on the cases everyone quotes, and model sizes as people write them."""

from __future__ import annotations

import pytest

from podtui.core.gpu import Method, estimate, parse_params


@pytest.mark.parametrize(
    ("text", "params"),
    [
        ("350M", 350e6),
        ("1.5B", 1.5e9),
        ("7b", 7e9),
        ("70B", 70e9),
        (" 13B params ", 13e9),
        ("7e9", 7e9),
        ("7000000000", 7e9),
        ("1,300M", 1.3e9),
        ("0.5t", 0.5e12),
    ],
)
def test_model_sizes(text: str, params: float) -> None:
    assert parse_params(text) == pytest.approx(params)


@pytest.mark.parametrize("text", ["", "7 GB", "seven", "7BB", "-7B", "1K", "3T", "7B; DROP"])
def test_bad_model_sizes_say_how_to_write_one(text: str) -> None:
    with pytest.raises(ValueError, match="model size"):
        parse_params(text)


def test_7b_inference_fp16_is_14_gb_of_weights_and_fits_a_24_gb_card() -> None:
    e = estimate(7e9, Method.INFERENCE)
    assert e.precision == "fp16"
    assert e.parts[0].name == "weights" and e.parts[0].gb == pytest.approx(14.0)
    assert e.total_gb == pytest.approx(16.8)  # the x1.2 serving rule
    assert e.total_gb < 24


def test_7b_full_fine_tune_with_adam_is_16_bytes_per_parameter() -> None:
    e = estimate(7e9, Method.FULL)
    by = {p.name: p.gb for p in e.parts}
    assert by == pytest.approx(
        {
            "weights": 14.0,
            "gradients": 14.0,
            "fp32 master weights": 28.0,
            "Adam optimizer states": 56.0,
            "activations, overhead": 112 * 0.3 + 1,
        }
    )
    states = e.total_gb - by["activations, overhead"]
    assert states == pytest.approx(112.0)  # 16 bytes x 7B
    assert 80 < e.total_gb <= 160  # more than one 80 GB card, fits two


def test_full_fine_tune_in_plain_fp32_is_also_16_bytes() -> None:
    e = estimate(1e9, Method.FULL, "fp32")
    assert [p.name for p in e.parts] == ["weights", "gradients", "Adam optimizer states", "activations, overhead"]
    assert sum(p.gb for p in e.parts[:-1]) == pytest.approx(16.0)


def test_full_fine_tune_refuses_quantized_weights() -> None:
    with pytest.raises(ValueError, match="qlora"):
        estimate(7e9, Method.FULL, "4bit")


def test_lora_on_1b_fits_24_gb_easily_and_qlora_defaults_to_4_bit() -> None:
    lora = estimate(1e9, Method.LORA)
    assert lora.precision == "bf16" and lora.total_gb < 8
    qlora = estimate(7e9, Method.QLORA)
    assert qlora.precision == "4bit" and qlora.parts[0].gb == pytest.approx(3.5)
    assert qlora.total_gb < estimate(7e9, Method.LORA).total_gb < 24


def test_the_breakdown_reads_as_lines() -> None:
    lines = estimate(7e9, Method.INFERENCE).lines()
    assert lines[0] == "7B inference (fp16): about 16.8 GB of GPU memory"
    assert "14.0 GB" in lines[1] and "KV cache" in lines[2]


def test_unknown_precision() -> None:
    with pytest.raises(ValueError, match="precision"):
        estimate(7e9, Method.LORA, "fp8")
