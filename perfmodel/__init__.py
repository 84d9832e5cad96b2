"""Performance model: execution plans, Rubick iteration-time model, memory, sensitivity curves."""

from perfmodel.plans import DEFAULT_GA_STEPS, ExecutionPlan, ZeroMode, parse_plan

__all__ = ["DEFAULT_GA_STEPS", "ExecutionPlan", "ZeroMode", "parse_plan"]
