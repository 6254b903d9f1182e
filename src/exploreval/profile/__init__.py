"""``exploreval profile``: one battery across the five paradigms, its plan and its card.

The battery (``profile-v1``) is assembled from the profile parts the suites register
(``exploreval.core.profile_parts``); this package never imports a suite. It plans what the
battery will cost before the first call (calibrated calls, tokens, dollars and wall time), and
turns a finished run into the card: a row per paradigm, each metric placed between two reference
policies, with the papers' published values drawn where the conditions match.
"""

from typing import TYPE_CHECKING

from exploreval.core import lazy_exports

if TYPE_CHECKING:
    from exploreval.profile._battery import (
        BATTERIES,
        BATTERY_NAME,
        BatteryError,
        PartSlice,
        battery_digest,
        battery_experiment,
        battery_parts,
    )
    from exploreval.profile._card import Card, CardRow, Estimate, Mark, MetricCell, Usage
    from exploreval.profile._leaderboard import (
        Delta,
        LeaderboardError,
        Profile,
        check_comparable,
        leaderboard_html,
        load_profile,
        paired_deltas,
    )
    from exploreval.profile._make import (
        battery_plan,
        estimate_lines,
        make_card,
        model_usage,
        spec_plans,
    )
    from exploreval.profile._plan import Plan, PlanItem, PlanLine, calibration, plan_lines
    from exploreval.profile._references import (
        PaperReferences,
        ReferenceMark,
        all_references,
        paper_references,
    )
    from exploreval.profile._render import (
        card_figure,
        card_html,
        card_markdown,
        estimate_text,
        placement_text,
        write_card,
    )

_EXPORTS: dict[str, str] = {
    "BATTERIES": "._battery",
    "BATTERY_NAME": "._battery",
    "BatteryError": "._battery",
    "PartSlice": "._battery",
    "battery_digest": "._battery",
    "battery_experiment": "._battery",
    "battery_parts": "._battery",
    "Card": "._card",
    "CardRow": "._card",
    "Estimate": "._card",
    "Mark": "._card",
    "MetricCell": "._card",
    "Usage": "._card",
    "Delta": "._leaderboard",
    "LeaderboardError": "._leaderboard",
    "Profile": "._leaderboard",
    "check_comparable": "._leaderboard",
    "leaderboard_html": "._leaderboard",
    "load_profile": "._leaderboard",
    "paired_deltas": "._leaderboard",
    "battery_plan": "._make",
    "estimate_lines": "._make",
    "make_card": "._make",
    "model_usage": "._make",
    "spec_plans": "._make",
    "Plan": "._plan",
    "PlanItem": "._plan",
    "PlanLine": "._plan",
    "calibration": "._plan",
    "plan_lines": "._plan",
    "PaperReferences": "._references",
    "ReferenceMark": "._references",
    "all_references": "._references",
    "paper_references": "._references",
    "card_figure": "._render",
    "card_html": "._render",
    "card_markdown": "._render",
    "write_card": "._render",
    "estimate_text": "._render",
    "placement_text": "._render",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())

__all__ = [
    "BATTERIES",
    "BATTERY_NAME",
    "BatteryError",
    "Card",
    "CardRow",
    "Delta",
    "Estimate",
    "LeaderboardError",
    "Mark",
    "MetricCell",
    "PaperReferences",
    "PartSlice",
    "Plan",
    "PlanItem",
    "PlanLine",
    "Profile",
    "ReferenceMark",
    "Usage",
    "all_references",
    "battery_digest",
    "battery_experiment",
    "battery_parts",
    "battery_plan",
    "calibration",
    "card_figure",
    "card_html",
    "card_markdown",
    "check_comparable",
    "estimate_lines",
    "estimate_text",
    "leaderboard_html",
    "load_profile",
    "make_card",
    "model_usage",
    "paired_deltas",
    "paper_references",
    "placement_text",
    "plan_lines",
    "spec_plans",
    "write_card",
]
