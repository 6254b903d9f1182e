"""Rule-based rewrites: statement splitting, comments and wrong variants (properties)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from exploreval.suites.terminal._variants import (
    body_of,
    build_candidate,
    candidate_ids,
    commented_script,
    explain_step,
    heredoc_spans,
    is_executed,
    is_safe,
    mutation_sites,
    seed_of,
    split_steps,
)

SIMPLE = st.sampled_from(
    [
        "mkdir -p out",
        "cp a.txt out/b.txt",
        "sort -n data.txt > sorted.txt",
        "grep -c ERROR app.log > n.txt",
        "echo done",
        "cd sub",
        "jq -r '.[] | .name' users.json | sort > names.txt",
    ]
)
BLOCK = st.sampled_from(
    [
        'for f in *.txt; do\n  mv "$f" out/\ndone',
        "cat > x.py <<'EOF'\nprint(1)\n  indented = True\nEOF",
        "if [ -f a ]; then\n  echo yes\nfi",
        "{ echo a; echo b; } > both.txt",
        "tail -n +2 a.csv |\n  sort",
    ]
)


@given(st.lists(st.one_of(SIMPLE, BLOCK), min_size=1, max_size=6))
def test_steps_partition_the_body(parts):
    script = "#!/bin/bash\nset -e\n" + "\n".join(parts) + "\n"
    steps = split_steps(script)
    assert steps == parts
    commented = commented_script(script)
    assert commented.count("# Step ") == len(parts)
    for i in range(1, len(parts) + 1):
        assert f"\nstep_{i}\n" in commented + "\n"


def test_heredoc_bodies_are_kept_byte_exact():
    script = "#!/bin/bash\ncat > x.py <<'EOF'\nprint(1)\n  indented = True\nEOF\n"
    out = commented_script(script)
    assert "\nprint(1)\n  indented = True\nEOF\n" in out
    assert (
        explain_step(split_steps(script)[0])
        == "Write the file x.py with the text between the EOF markers"
    )


def test_explanations_by_rule():
    assert explain_step("mkdir -p out") == "Create the directory out"
    assert (
        explain_step("sort -n data.txt > sorted.txt")
        == "Sort the lines, writing the result to sorted.txt"
    )
    assert explain_step('./app payments send --to "Bo" --amount 5').startswith(
        "Call the app endpoint 'payments send'"
    )
    assert explain_step("git commit -q -m 'x'") == "Record a commit"


GOLD = st.sampled_from(
    [
        "#!/bin/bash\nset -e\nprintf 'Hello, terminal!\\n' > greeting.txt\n",
        "#!/bin/bash\nset -e\ncd repo\ngit revert --no-edit HEAD~1\n",
        "#!/bin/bash\nawk -F, 'NR > 1 {t += $3} END {print t}' sales.csv > total.txt\n",
        '#!/bin/bash\nfor f in *.log; do\n  gzip -k "$f"\ndone\n',
    ]
)


@given(GOLD, st.integers(0, 10_000))
def test_every_candidate_is_a_safe_one_or_two_site_change(gold, draw):
    header, body = body_of(gold)
    sites = mutation_sites(body)
    ids = candidate_ids(len(sites), seed_of(gold))
    cid = ids[draw % len(ids)]
    text = build_candidate(gold, cid)
    if text is None:
        return  # overlapping pair or unsafe: never used
    assert text != gold
    assert text.startswith(header)  # the shebang / set -e header is never mutated
    assert is_safe(body, text[len(header) :])
    n_sites = 1 if cid.startswith("s") else 2
    assert cid.count("-") == n_sites - 1
    # every edited site is an executed instruction (no comment, no display-only echo/cat)
    chosen = [int(cid[1:])] if cid.startswith("s") else [int(x) for x in cid[1:].split("-")]
    assert all(is_executed(body, sites[i]) for i in chosen)


def test_candidate_order_is_deterministic_and_singles_first():
    a = candidate_ids(12, seed_of("task-a"))
    assert a == candidate_ids(12, seed_of("task-a"))
    assert a != candidate_ids(12, seed_of("task-b"))
    assert all(c.startswith("s") for c in a[:12]) and all(c.startswith("p") for c in a[12:])
    assert len(a) == 12 + 12 * 11 // 2


def test_unsafe_mutations_are_rejected():
    assert not is_safe("rm -rf out/", "rm -rf /")
    assert not is_safe("cat a.txt", "cat ../a.txt")
    assert not is_safe("cat /app/a.txt", "cat /etc/a.txt")
    assert is_safe("cat /app/a.txt", "cat /app/a.txt > b")


def _sites_on(body: str, needle: str) -> list:
    """The mutation sites that start inside the first occurrence of ``needle``."""
    at = body.index(needle)
    return [s for s in mutation_sites(body) if at <= s.start < at + len(needle)]


def test_decoys_never_edit_comments_or_display_only_commands():
    """Paper 4 Appendix B.3: a decoy changes an instruction's behaviour. A comment, a trailing
    comment, or an echo/printf/cat that only prints is not one; an echo into a file is (that is
    how such tasks write answers), and so is any line of a heredoc a script writes."""
    body = (
        "# make the report\n"
        "echo starting\n"
        'echo "a # b" > out.txt  # trailing note\n'
        "cat > run.sh <<'EOF'\n"
        "# a line of the written script\n"
        "echo $1\n"
        "EOF\n"
        "sort -n data.txt > sorted.txt\n"
    )
    assert heredoc_spans(body) == [
        (body.index("# a line"), body.index("EOF\nsort")),
    ]
    never = ["# make the report", "echo starting", "# trailing note"]
    always = ['echo "a # b" > out.txt', "# a line of the written script", "echo $1", "sort -n"]
    for needle in never:
        sites = _sites_on(body, needle)
        assert sites and not any(is_executed(body, s) for s in sites), needle
    for needle in always:
        sites = _sites_on(body, needle)
        assert sites and all(is_executed(body, s) for s in sites), needle
