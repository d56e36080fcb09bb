"""The results table: each figure next to its target, PASS/MISS as information (never an exit code)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Row:
    """One figure. `ok` None means there is no target (a figure given for context)."""

    section: str
    figure: str
    value: str
    target: str = "-"
    ok: bool | None = None
    detail: str = ""

    @property
    def status(self) -> str:
        return "info" if self.ok is None else ("PASS" if self.ok else "MISS")


@dataclass
class Report:
    header: list[str] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, row: Row) -> Row:
        self.rows.append(row)
        return row

    def ordered(self) -> list[Row]:
        """Rows grouped by section (they are measured in another order: phases share servers)."""
        return sorted(self.rows, key=lambda r: r.section)

    def text(self) -> str:
        cols = ("section", "figure", "value", "target", "status")
        table = [cols, *[(r.section, r.figure, r.value, r.target, r.status) for r in self.ordered()]]
        widths = [min(70, max(len(str(line[i])) for line in table)) for i in range(len(cols))]
        out = [*self.header, ""]
        for i, line in enumerate(table):
            out.append("  ".join(str(cell).ljust(widths[j]) for j, cell in enumerate(line)))
            if i == 0:
                out.append("  ".join("-" * w for w in widths))
        details = [f"- {r.section} / {r.figure}: {r.detail}" for r in self.ordered() if r.detail]
        if details:
            out += ["", "details:", *details]
        if self.notes:
            out += ["", "notes:", *[f"- {n}" for n in self.notes]]
        return "\n".join(out)

    def markdown(self, title: str = "Benchmark results") -> str:
        out = [f"# {title}", "", *[f"- {h}" for h in self.header], "",
               "| section | figure | value | target | status |", "|---|---|---|---|---|"]
        for r in self.ordered():
            cells = [r.section, r.figure, r.value, r.target, f"**{r.status}**" if r.status == "MISS" else r.status]
            out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        details = [f"- **{r.section} / {r.figure}**: {r.detail}" for r in self.ordered() if r.detail]
        if details:
            out += ["", "## Details", "", *details]
        if self.notes:
            out += ["", "## Notes", "", *[f"- {n}" for n in self.notes]]
        return "\n".join(out) + "\n"
