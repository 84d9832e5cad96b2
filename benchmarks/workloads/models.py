"""Model names in public traces -> the perf model's zoo.

A trace's model name is matched case-insensitively (``-``, ``_``, ``.``, ``/`` and spaces ignored)
against the zoo and its own aliases (``ResNet-50``, ``inception_v3``, ``LLaMA-2-7B``, ...), then against
:data:`TRACE_ALIASES`, the names public traces use for a workload whose network the zoo has under
another name (Pollux/Sia name jobs by their *application*). Names in :data:`UNSERVED` are known
workloads the zoo has no model for; they, and any name matched nowhere, are reported and run at the
reference rate (duration as recorded, linear in GPUs) -- never replaced by a guess.
"""

from __future__ import annotations

import re
from types import MappingProxyType

from schedlab.benchmarks.simulator.perf_adapter import zoo_name

#: trace name -> zoo model, with the source of the correspondence
TRACE_ALIASES: MappingProxyType[str, tuple[str, str]] = MappingProxyType({
    "cifar10": ("resnet18", "Pollux/Sia application cifar10 = ResNet-18 on CIFAR-10 (Pollux Table 1)"),
    "imagenet": ("resnet50", "Pollux/Sia application imagenet = ResNet-50 on ImageNet (Pollux Table 1)"),
    "bertsquad": ("bert", "BERT fine-tuned on SQuAD (the zoo's bert; Pollux/Sia name these jobs bert)"),
    "resnet18cifar10": ("resnet18", "ResNet-18 on CIFAR-10"),
    "resnet50imagenet": ("resnet50", "ResNet-50 on ImageNet"),
})

#: trace name -> why the zoo cannot serve it (reported; the job runs at the reference rate)
UNSERVED: MappingProxyType[str, str] = MappingProxyType({
    "deepspeech2": "DeepSpeech2 (speech recognition, recurrent): no zoo model",
    "ncf": "NeuMF / NCF (recommendation, embedding-bound): no zoo model",
    "neumf": "NeuMF / NCF (recommendation, embedding-bound): no zoo model",
    "yolov3": "YOLOv3 (object detection, Darknet-53): no zoo model",
    "googlenet": "GoogLeNet / Inception-v1: no zoo model (the zoo has Inception-v3 and -v4)",
    "transformer": "an unnamed Transformer: no size given, no zoo model chosen",
    "lstm": "an unnamed LSTM: no zoo model",
})


def model_key(name: str) -> str:
    """The matching key of a model name: lower case, ``-``, ``_``, ``.``, ``/`` and spaces removed."""
    return re.sub(r"[\s_\-./]", "", name.strip().lower())


def resolve_trace_model(name: str) -> tuple[str | None, str]:
    """``(zoo name, how)`` for a trace's model name; ``(None, why)`` when the zoo cannot serve it.

    ``how`` is ``"zoo"`` (the zoo's own name or alias), ``"alias"`` (:data:`TRACE_ALIASES`; the note is
    in :data:`TRACE_ALIASES`), ``"unserved"`` or ``"unknown"``.
    """
    z = zoo_name(name)
    if z is not None:
        return z, "zoo"
    k = model_key(name)
    if k in TRACE_ALIASES:
        return TRACE_ALIASES[k][0], "alias"
    if k in UNSERVED:
        return None, "unserved"
    return None, "unknown"


__all__ = ["TRACE_ALIASES", "UNSERVED", "model_key", "resolve_trace_model"]
