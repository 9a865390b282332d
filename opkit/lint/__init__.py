"""`opkit lint`: sources → rules → findings → reporters. Never imports torch."""

from opkit.lint.engine import LintResult, lint
from opkit.lint.finding import Finding, Severity
from opkit.lint.registry import RULES, Rule, Selection, load_rules

__all__ = ["Finding", "LintResult", "RULES", "Rule", "Selection", "Severity", "lint", "load_rules"]
