"""A real multi-node Ray cluster on one machine, for tests and benchmarks of ``--executor ray``.

Each node is its own raylet with its own object store, and its own temporary and cache
directories (``TMPDIR``, ``XDG_CACHE_HOME``), so that nothing a worker writes is seen by
another node or by the driver by accident: what must travel between them has to travel.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class LocalCluster:
    """A running cluster: its address, its nodes, and where each node keeps its files."""

    address: str
    cluster: Any
    #: Ray node handles, head first.
    nodes: list[Any] = field(default_factory=list)
    #: Each node's own directory (its TMPDIR and XDG_CACHE_HOME are under it), head first.
    node_dirs: list[Path] = field(default_factory=list)
    #: PYTHONPATH of every node's processes (where a test's plugin modules live).
    python_path: str = ""

    def node_env(self, index: int) -> dict[str, str]:
        root = self.node_dirs[index]
        variables = {"TMPDIR": str(root / "tmp"), "XDG_CACHE_HOME": str(root / "cache")}
        return {**variables, "PYTHONPATH": self.python_path} if self.python_path else variables

    # -> Any: Ray's node handle (ray._private.node.Node, not a public type)
    def add_node(self, cpus: int = 1, env: dict[str, str] | None = None) -> Any:
        root = Path(
            tempfile.mkdtemp(prefix=f"node{len(self.nodes)}-", dir=self.node_dirs[0].parent)
        )
        root.chmod(0o755)  # as /tmp's children are: the terminal sandbox's uid must traverse it
        self.node_dirs.append(root)
        variables = {**self.node_env(len(self.node_dirs) - 1), **(env or {})}
        for key in ("TMPDIR", "XDG_CACHE_HOME"):
            Path(variables[key]).mkdir(parents=True, exist_ok=True)
        node = self.cluster.add_node(num_cpus=cpus, env_vars=variables)
        self.nodes.append(node)
        return node

    def kill_node(self, node: Any, *, wait_s: float = 60.0) -> None:
        """The node's raylet and every process on it end at once (a machine that goes away);
        returns once the cluster lists the node as dead (so later runs do not place on it)."""
        import time

        import ray

        self.cluster.remove_node(node, allow_graceful=False)
        self.nodes.remove(node)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            nodes = ray.nodes()  # type: ignore[no-untyped-call]
            if not any(n["NodeID"] == node.node_id and n["Alive"] for n in nodes):
                return
            time.sleep(0.2)


@contextlib.contextmanager
def local_cluster(
    cpus: Sequence[int] = (1, 1, 1),
    *,
    envs: Sequence[dict[str, str] | None] | None = None,
    python_path: Sequence[str] = (),
    connect: bool = True,
) -> Iterator[LocalCluster]:
    """A head and ``len(cpus) - 1`` worker nodes with those CPU counts, connected as the
    driver (``ray.init``) unless ``connect`` is false. ``python_path``: extra import paths every
    node's processes get (where a test's plugin modules live); set on the nodes rather than as
    a job's runtime env, so that Ray's pre-started worker processes serve the actors, as on a
    cluster whose nodes have the plugins installed."""
    import ray
    from ray.cluster_utils import Cluster

    root = Path(tempfile.mkdtemp(prefix="exploreval-cluster-"))
    root.chmod(0o755)
    envs = list(envs or [None] * len(cpus))
    paths = [*python_path, *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
    made = LocalCluster("", None, [], [root / "node0"], os.pathsep.join(p for p in paths if p))
    head_env = made.node_env(0)
    for key in ("TMPDIR", "XDG_CACHE_HOME"):
        Path(head_env[key]).mkdir(parents=True)
    cluster = Cluster(
        initialize_head=True,
        head_node_args={
            "num_cpus": cpus[0],
            "include_dashboard": False,
            "env_vars": {**head_env, **(envs[0] or {})},
        },
    )
    made.address, made.cluster, made.nodes = cluster.address, cluster, [cluster.head_node]
    try:
        for count, env in zip(cpus[1:], envs[1:], strict=True):
            made.add_node(count, env)
        cluster.wait_for_nodes()
        if connect:
            ray.init(address=cluster.address, log_to_driver=False)
        yield made
    finally:
        if connect:
            ray.shutdown()
        cluster.shutdown()  # type: ignore[no-untyped-call]
        shutil.rmtree(root, ignore_errors=True)
