"""The executable reference of a model page: every ```python block of a
Markdown document, run in order in one namespace. Shared by the check_*.py
scripts, which then compare what the blocks compute with the golden
vectors and the binary."""

import re


def load_blocks(doc_path, name, error=Exception):
    """Runs the blocks of `doc_path`; returns (namespace, block count).
    A document without blocks, or a block that fails, raises `error`."""
    with open(doc_path, encoding="utf-8") as f:
        text = f.read()
    blocks = re.findall(r"^```python[ \t]*\n(.*?)^```[ \t]*$", text, re.S | re.M)
    if not blocks:
        raise error(f"{doc_path} has no ```python blocks")
    namespace = {"__name__": name}
    for k, block in enumerate(blocks, 1):
        try:
            exec(compile(block, f"{doc_path}:block{k}", "exec"), namespace)
        except Exception as e:  # noqa: BLE001 - any failure of a block is a finding
            raise error(f"python block {k} of {doc_path} failed: {e!r}") from e
    return namespace, len(blocks)
