"""Per-tensor parameter counts built from each architecture's layer definition.

Used for Tiresias' skew (largest tensor / model size) and for the parameter-server shards of its ILP.
Counts are *elements* (parameters); :func:`perfmodel.network.tensor_sizes` turns them into bytes.

How the lists are derived (documented in ``docs/perfmodel.md``):

* VGG / AlexNet / ResNet: exact torchvision layer definitions (conv weight, conv bias where the layer
  has one, batch-norm gamma and beta, FC weight and bias). Their sums equal the published parameter
  counts (VGG16 138,357,544; ResNet-50 25,557,032; AlexNet 61,100,840).
* Transformers: embedding tables + per layer the Q/K/V/output projections, the two (or, for LLaMA,
  three) MLP matrices, biases and norms, as in the reference implementations.
* Inception-v3/v4 and MobileNetV3: only the large tensors are listed exactly (classifier, last
  convolutions); the rest of the parameters are spread evenly over the remaining convolution count,
  so the largest tensor (what skew needs) is exact and the list sums to the published total.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType


def _conv(cin: int, cout: int, k: int, *, bias: bool = True, bn: bool = False) -> list[int]:
    out = [cin * cout * k * k]
    if bias:
        out.append(cout)
    if bn:
        out += [cout, cout]
    return out


def _fc(cin: int, cout: int) -> list[int]:
    return [cin * cout, cout]


_VGG_CFG: MappingProxyType[str, Sequence[int | str]] = MappingProxyType({
    "vgg11": (64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"),
    "vgg16": (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"),
    "vgg19": (64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M",
              512, 512, 512, 512, "M"),
})


def vgg(name: str, classes: int = 1000) -> list[int]:
    out: list[int] = []
    cin = 3
    for v in _VGG_CFG[name]:
        if v == "M":
            continue
        out += _conv(cin, int(v), 3)
        cin = int(v)
    return out + _fc(512 * 7 * 7, 4096) + _fc(4096, 4096) + _fc(4096, classes)


def alexnet(classes: int = 1000) -> list[int]:
    return (_conv(3, 64, 11) + _conv(64, 192, 5) + _conv(192, 384, 3) + _conv(384, 256, 3)
            + _conv(256, 256, 3) + _fc(256 * 6 * 6, 4096) + _fc(4096, 4096) + _fc(4096, classes))


_RESNET: MappingProxyType[str, tuple[str, tuple[int, int, int, int]]] = MappingProxyType({
    "resnet18": ("basic", (2, 2, 2, 2)),
    "resnet50": ("bottleneck", (3, 4, 6, 3)),
    "resnet101": ("bottleneck", (3, 4, 23, 3)),
    "resnet152": ("bottleneck", (3, 8, 36, 3)),
})


def resnet(name: str, classes: int = 1000) -> list[int]:
    kind, blocks = _RESNET[name]
    out = _conv(3, 64, 7, bias=False, bn=True)
    cin = 64
    exp = 1 if kind == "basic" else 4
    for stage, n in enumerate(blocks):
        width = 64 * 2 ** stage
        for i in range(n):
            if kind == "basic":
                out += _conv(cin, width, 3, bias=False, bn=True) + _conv(width, width, 3, bias=False, bn=True)
            else:
                out += (_conv(cin, width, 1, bias=False, bn=True) + _conv(width, width, 3, bias=False, bn=True)
                        + _conv(width, width * 4, 1, bias=False, bn=True))
            if i == 0 and (cin != width * exp):
                out += _conv(cin, width * exp, 1, bias=False, bn=True)  # projection shortcut
            cin = width * exp
    return out + _fc(cin, classes)


def _spread(total: int, exact: list[int], n_rest: int) -> list[int]:
    """``exact`` tensors plus ``n_rest`` equal tensors making up ``total`` parameters."""
    rest = total - sum(exact)
    if rest <= 0 or n_rest <= 0:
        return exact
    each, extra = divmod(rest, n_rest)
    return exact + [each + (1 if i < extra else 0) for i in range(n_rest)]


def inception3(classes: int = 1000) -> list[int]:
    # classifier 2048x1000 and the two largest convolutions (Mixed_7c 1x1 on 2048 -> 448/384/320)
    exact = _fc(2048, classes) + [2048 * 448, 448 * 384 * 9]
    return _spread(23_834_568, exact, 92)


def inception4(classes: int = 1000) -> list[int]:
    exact = _fc(1536, classes) + [1536 * 384, 384 * 256 * 3 * 3]
    return _spread(42_679_816, exact, 146)


def mobilenetv3(classes: int = 1000) -> list[int]:
    # MobileNetV3-Large head: conv 960 -> 1280 (with bias) and the 1280 x 1000 classifier
    exact = _fc(1280, classes) + [960 * 1280, 1280]
    return _spread(5_483_032, exact, 60)


def bert_like(vocab: int, hidden: int, layers: int, ffn: int, positions: int, *, types: int = 2,
              pooler: bool = True) -> list[int]:
    """BERT/RoBERTa/ViT-style encoder (biases and two layer norms per layer)."""
    out = [vocab * hidden, positions * hidden] + ([types * hidden] if types else []) + [hidden, hidden]
    for _ in range(layers):
        out += _fc(hidden, hidden) * 3 + _fc(hidden, hidden) + [hidden, hidden]
        out += _fc(hidden, ffn) + _fc(ffn, hidden) + [hidden, hidden]
    if pooler:
        out += _fc(hidden, hidden)
    return out


def gpt_like(vocab: int, hidden: int, layers: int, ffn: int, positions: int) -> list[int]:
    out = [vocab * hidden, positions * hidden]
    for _ in range(layers):
        out += [hidden, hidden] + _fc(hidden, 3 * hidden) + _fc(hidden, hidden)
        out += [hidden, hidden] + _fc(hidden, ffn) + _fc(ffn, hidden)
    return out + [hidden, hidden]


def t5_like(vocab: int, hidden: int, layers: int, ffn: int) -> list[int]:
    """Encoder-decoder without biases; ``layers`` counts encoder + decoder layers (half each)."""
    out = [vocab * hidden]
    enc = layers // 2
    for i in range(layers):
        out += [hidden * hidden] * 4 + [hidden]  # self-attention q,k,v,o + norm
        if i >= enc:
            out += [hidden * hidden] * 4 + [hidden]  # cross-attention
        out += [hidden * ffn, ffn * hidden, hidden]
    return out + [hidden, hidden]


def llama_like(vocab: int, hidden: int, layers: int, ffn: int) -> list[int]:
    out = [vocab * hidden]
    for _ in range(layers):
        out += [hidden * hidden] * 4 + [hidden] + [hidden * ffn] * 3 + [hidden]
    return out + [hidden, vocab * hidden]


__all__ = ["alexnet", "bert_like", "gpt_like", "inception3", "inception4", "llama_like", "mobilenetv3",
           "resnet", "t5_like", "vgg"]
