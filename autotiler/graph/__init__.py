"""Graph memory planning: pure functions on plain inputs (no model API).

- :mod:`.plan`: buffers with lifetimes, the lower bound, static placement in one level
  (greedy heuristics of TFLite Micro and TVM USMP, ping-pong, hill climbing), the checker,
  aliases and stacked tensors merged into buffers.
- :mod:`.spill`: L2 and L3: which buffers go to L3 when L2 is too small.
- :mod:`.flash`: the flash image of constants, promotion to static L2, prefetch schedule.
- :mod:`.zoo`: reference graphs for tests and the benchmark.

See docs/graph-planning.md.
"""

from .flash import FlashImage, Prefetch, Promotion, pack_constants, prefetch_schedule, promote_constants
from .plan import (
    ALGORITHMS,
    Buffer,
    Merged,
    Placement,
    PlanError,
    check_placement,
    live_bytes,
    lower_bound,
    merge_aliases,
    node_tops,
    placement_conflicts,
    plan_static,
)
from .spill import LevelPlan, extra_name, plan_levels

__all__ = [
    "ALGORITHMS", "Buffer", "FlashImage", "LevelPlan", "Merged", "Placement", "PlanError", "Prefetch", "Promotion",
    "check_placement", "extra_name", "live_bytes", "lower_bound", "merge_aliases", "node_tops", "pack_constants",
    "placement_conflicts", "plan_levels", "plan_static", "prefetch_schedule", "promote_constants",
]
