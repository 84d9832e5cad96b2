"""The model zoo: the 7 Rubick models (artifact names) and the CNNs of Tiresias / Dally.

Units: ``fwd_time_s`` is the forward time in **seconds** of ``profile_batch`` samples on one GPU
(no parallelism); ``bytes_per_element`` is the training precision of activations / gradients
(2 = fp16 mixed precision, 4 = fp32); ``act_bytes_per_sample`` (CNNs only) is the activation memory
of one sample through the whole network in bytes. ``tensors`` are per-tensor parameter counts
(elements) summing to ``params`` (see :mod:`perfmodel.architectures`).

Sources (the rest is marked *ours* in ``docs/perfmodel.md``):

* Rubick models: dimensions, parameter counts, profile batch and forward time from the Rubick
  artifact, except BERT (hidden 1024 / sequence 512, as in the artifact's own BERT script and
  consistent with its 336M parameters) and LLaMA-30B (the real LLaMA-30B dimensions 6656 / 52 heads /
  60 layers / FFN 17920, 32.5B parameters; the artifact reuses BERT's). LLaMA-30B's forward time is
  LLaMA-7B's per sample scaled by the parameter ratio (ours). The global batch of LLaMA-7B/30B is ours
  (32) so that DP x PP micro-batching divides it.
* CNNs: parameter counts and tensor lists from the torchvision definitions; forward time per sample
  from public P100 tf_cnn_benchmarks training rates as ``1 / (3 x rate)`` (forward = 1/3 of a training
  step, ours); activation bytes per sample approximate (ours); global batch 256 (ours).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType

from schedlab.perfmodel import architectures as arch
from schedlab.topology.errors import SpecError


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """One DL model as the performance model sees it (see the module docstring for units)."""

    name: str
    family: str  # "transformer" | "cnn"
    params: int
    hidden: int
    heads: int
    layers: int
    seq_len: int
    global_batch: int
    profile_batch: int
    fwd_time_s: float
    bytes_per_element: int = 2
    ffn_hidden: int = 0
    vocab: int = 0
    act_bytes_per_sample: float | None = None
    tensors: tuple[int, ...] = field(default=(), repr=False)
    allow_3d: bool = False
    allow_zero: bool = True
    display: str = ""

    def __post_init__(self) -> None:
        src = f"<model {self.name!r}>"
        if self.family not in ("transformer", "cnn"):
            raise SpecError(f"family must be 'transformer' or 'cnn', got {self.family!r}", source=src,
                            field="family")
        for f in ("params", "layers", "global_batch", "profile_batch", "bytes_per_element"):
            v = getattr(self, f)
            if not isinstance(v, int) or v < 1:
                raise SpecError(f"{f} must be a positive integer, got {v!r}", source=src, field=f)
        if not self.fwd_time_s > 0:
            raise SpecError(f"fwd_time_s must be > 0 s, got {self.fwd_time_s!r}", source=src, field="fwd_time_s")
        if self.family == "transformer" and (self.hidden < 1 or self.seq_len < 1):
            raise SpecError("transformers need hidden and seq_len >= 1", source=src, field="hidden")

    @property
    def fwd_time_per_sample(self) -> float:
        """Forward time of one sample through the whole model on one GPU, seconds."""
        return self.fwd_time_s / self.profile_batch

    @property
    def size_bytes(self) -> int:
        """Model size in bytes at the training precision (``params * bytes_per_element``)."""
        return self.params * self.bytes_per_element

    @property
    def skew(self) -> float:
        """Largest tensor / model size (Tiresias)."""
        return max(self.tensors) / sum(self.tensors) if self.tensors else 1.0


def _normalise(counts: Sequence[int], total: int) -> tuple[int, ...]:
    """Scale ``counts`` to sum exactly to ``total`` (largest-remainder rounding), keeping the ratios."""
    s = sum(counts)
    if s == total:
        return tuple(counts)
    raw = [c * total / s for c in counts]
    out = [int(r) for r in raw]
    short = total - sum(out)
    for i in sorted(range(len(raw)), key=lambda i: raw[i] - out[i], reverse=True)[:short]:
        out[i] += 1
    return tuple(out)


def _transformer(name: str, display: str, *, params: int, hidden: int, heads: int, layers: int, seq: int,
                 global_batch: int, profile_batch: int, fwd_ms: float, tensors: list[int], ffn: int = 0,
                 vocab: int = 0) -> ModelSpec:
    return ModelSpec(name=name, family="transformer", params=params, hidden=hidden, heads=heads, layers=layers,
                     seq_len=seq, global_batch=global_batch, profile_batch=profile_batch,
                     fwd_time_s=fwd_ms / 1000.0, bytes_per_element=2, ffn_hidden=ffn or 4 * hidden,
                     vocab=vocab, tensors=_normalise(tensors, params), allow_3d=params >= 1_000_000_000,
                     allow_zero=True, display=display)


def _cnn(name: str, display: str, *, layers: int, rate: float, act_mb: float, tensors: list[int]) -> ModelSpec:
    return ModelSpec(name=name, family="cnn", params=sum(tensors), hidden=0, heads=0, layers=layers,
                     seq_len=0, global_batch=256, profile_batch=1, fwd_time_s=1.0 / (3.0 * rate),
                     bytes_per_element=4, act_bytes_per_sample=act_mb * 1e6, tensors=tuple(tensors),
                     allow_3d=False, allow_zero=False, display=display)


def _build() -> dict[str, ModelSpec]:
    m: list[ModelSpec] = [
        _transformer("vit", "ViT-Base", params=85_952_456, hidden=768, heads=12, layers=12, seq=1024,
                     global_batch=64, profile_batch=64, fwd_ms=40,
                     tensors=arch.bert_like(3 * 16 * 16, 768, 12, 3072, 197, types=0, pooler=False)
                     + [768 * 1000, 1000]),
        _transformer("roberta", "RoBERTa-large", params=355_412_057, hidden=1024, heads=16, layers=24, seq=1024,
                     global_batch=64, profile_batch=64, fwd_ms=480, vocab=50265,
                     tensors=arch.bert_like(50265, 1024, 24, 4096, 514, types=1)),
        _transformer("bert", "BERT-large", params=336_297_858, hidden=1024, heads=16, layers=24, seq=512,
                     global_batch=32, profile_batch=32, fwd_ms=225, vocab=30522,
                     tensors=arch.bert_like(30522, 1024, 24, 4096, 512)),
        _transformer("t5", "T5 (1.2B)", params=1_240_809_472, hidden=1280, heads=16, layers=16, seq=768,
                     global_batch=16, profile_batch=16, fwd_ms=410, vocab=32128,
                     tensors=arch.t5_like(32128, 1280, 16, 5120)),
        _transformer("gpt2", "GPT-2 (1.5B)", params=1_557_686_400, hidden=1920, heads=16, layers=24, seq=1024,
                     global_batch=16, profile_batch=16, fwd_ms=1100, vocab=50257,
                     tensors=arch.gpt_like(50257, 1920, 24, 7680, 1024)),
        _transformer("llama7", "LLaMA-2-7B", params=6_738_423_808, hidden=4096, heads=32, layers=32, seq=2048,
                     global_batch=32, profile_batch=8, fwd_ms=1000, ffn=11008, vocab=32000,
                     tensors=arch.llama_like(32000, 4096, 32, 11008)),
        _transformer("llama30", "LLaMA-30B", params=32_528_943_616, hidden=6656, heads=52, layers=60, seq=2048,
                     global_batch=32, profile_batch=8, fwd_ms=1000 * 32_528_943_616 / 6_738_423_808,
                     ffn=17920, vocab=32000, tensors=arch.llama_like(32000, 6656, 60, 17920)),
        _cnn("vgg11", "VGG-11", layers=11, rate=220, act_mb=60, tensors=arch.vgg("vgg11")),
        _cnn("vgg16", "VGG-16", layers=16, rate=130, act_mb=110, tensors=arch.vgg("vgg16")),
        _cnn("vgg19", "VGG-19", layers=19, rate=110, act_mb=125, tensors=arch.vgg("vgg19")),
        _cnn("alexnet", "AlexNet", layers=8, rate=2000, act_mb=10, tensors=arch.alexnet()),
        _cnn("resnet18", "ResNet-18", layers=18, rate=600, act_mb=40, tensors=arch.resnet("resnet18")),
        _cnn("resnet50", "ResNet-50", layers=50, rate=215, act_mb=105, tensors=arch.resnet("resnet50")),
        _cnn("resnet101", "ResNet-101", layers=101, rate=125, act_mb=155, tensors=arch.resnet("resnet101")),
        _cnn("resnet152", "ResNet-152", layers=152, rate=88, act_mb=220, tensors=arch.resnet("resnet152")),
        _cnn("inception3", "Inception-v3", layers=48, rate=145, act_mb=90, tensors=arch.inception3()),
        _cnn("inception4", "Inception-v4", layers=75, rate=68, act_mb=180, tensors=arch.inception4()),
        _cnn("mobilenetv3", "MobileNetV3-Large", layers=20, rate=900, act_mb=45, tensors=arch.mobilenetv3()),
        ModelSpec(name="bert_large", family="transformer", params=336_297_858, hidden=1024, heads=16, layers=24,
                  seq_len=512, global_batch=256, profile_batch=1, fwd_time_s=1.0 / (3.0 * 50), bytes_per_element=2,
                  ffn_hidden=4096, vocab=30522,
                  tensors=_normalise(arch.bert_like(30522, 1024, 24, 4096, 512), 336_297_858),
                  allow_3d=False, allow_zero=True, display="BERT-large (Dally)"),
    ]
    return {s.name: s for s in m}


MODELS: MappingProxyType[str, ModelSpec] = MappingProxyType(_build())
RUBICK_MODELS: tuple[str, ...] = ("vit", "roberta", "bert", "t5", "gpt2", "llama7", "llama30")
CNN_MODELS: tuple[str, ...] = ("vgg11", "vgg16", "vgg19", "alexnet", "resnet18", "resnet50", "resnet101",
                               "resnet152", "inception3", "inception4", "mobilenetv3", "bert_large")


def _key(name: str) -> str:
    return re.sub(r"[\s_\-./]", "", name.strip().lower())


_ALIASES: MappingProxyType[str, str] = MappingProxyType({
    **{_key(n): n for n in MODELS},
    "vitbase": "vit", "vitb16": "vit", "robertalarge": "roberta", "bertbase": "bert",
    "t512b": "t5", "t5large": "t5", "gpt2xl": "gpt2",
    "llama27b": "llama7", "llama7b": "llama7", "llamav27b": "llama7", "llama2": "llama7",
    "llama30b": "llama30", "llama33b": "llama30",
    "inceptionv3": "inception3", "inceptionv4": "inception4", "googlenetv3": "inception3",
    "mobilenetv3large": "mobilenetv3", "mobilenet": "mobilenetv3",
})


def resolve_name(name: str) -> str | None:
    """The zoo name of ``name`` (case-insensitive, ``-``/``_``/spaces ignored), or None."""
    return _resolve(name) if isinstance(name, str) else _ALIASES.get(_key(str(name)))


@lru_cache(maxsize=4096)
def _resolve(name: str) -> str | None:
    """:func:`resolve_name` of a string, memoised (a pure function of the read-only alias table)."""
    return _ALIASES.get(_key(name))


def get_model(name: str) -> ModelSpec:
    """The zoo entry for ``name`` or an alias (``llama-2-7b``, ``GPT-2``, ``ResNet-50``).

    Raises :class:`SpecError` listing the known names.
    """
    key = resolve_name(name)
    if key is None:
        raise SpecError(f"unknown model {name!r}; known: {', '.join(MODELS)}", source="<model zoo>",
                        field="model")
    return MODELS[key]


__all__ = ["CNN_MODELS", "MODELS", "ModelSpec", "RUBICK_MODELS", "get_model", "resolve_name"]
