"""Reads an exported C++ header the way an application does: compiles a small program against
it with the system C++ compiler and prints every rule of every table as JSON lines. Tests use
it instead of pattern-matching the header's text."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

_PROGRAM = r"""
#include "dispatch.hpp"
#include <cstdio>
namespace d = reducetune_dispatch;
static void str(const char *s) {
  std::putchar('"');
  for (; s && *s; ++s) {
    if (*s == '"' || *s == '\\') std::putchar('\\');
    std::putchar(*s);
  }
  std::putchar('"');
}
static void params(const d::parameter *p, int n) {
  std::putchar('{');
  for (int i = 0; i < n; ++i) { if (i) std::putchar(','); str(p[i].name); std::putchar(':'); str(p[i].value); }
  std::putchar('}');
}
int main() {
  for (int t = 0; t < d::table_count; ++t)
    for (int r = 0; r < d::tables[t].rule_count; ++r) {
      const d::rule &x = d::tables[t].rules[r];
      const d::choice &c = x.pick;
      std::printf("{\"device\":"); str(d::tables[t].device_name);
      std::printf(",\"dtype\":"); str(d::tables[t].dtype);
      std::printf(",\"op\":"); str(d::tables[t].op);
      std::printf(",\"min_n\":%llu,\"bucket_n\":%llu,\"variant\":", x.min_n, c.bucket_n); str(c.variant);
      std::printf(",\"launch\":"); str(c.launch);
      std::printf(",\"compile_parameters\":"); params(c.compile_parameters, c.compile_parameter_count);
      std::printf(",\"launch_parameters\":"); params(c.launch_parameters, c.launch_parameter_count);
      std::printf(",\"launchable\":%s,\"protocol\":", c.launchable ? "true" : "false"); str(c.protocol);
      std::printf(",\"block_size\":%u,\"items_per_block\":%llu,\"max_blocks\":%llu,\"determinism\":",
                  c.block_size, c.items_per_block, c.max_blocks);
      str(c.determinism);
      std::printf("}\n");
    }
}
"""


def header_rules(header: str) -> list[dict[str, Any]]:
    """Every rule of the header (namespace reducetune_dispatch) as a dict; parameter values
    are the header's strings."""
    cxx = shutil.which("c++") or shutil.which("g++")
    assert cxx, "a C++ compiler is needed to read an exported header"
    with tempfile.TemporaryDirectory(prefix="reducetune-header-") as folder:
        d = Path(folder)
        (d / "dispatch.hpp").write_text(header)
        (d / "main.cpp").write_text(_PROGRAM)
        subprocess.run([cxx, "-std=c++17", "-O0", "-o", str(d / "rules"), str(d / "main.cpp")],
                       check=True, capture_output=True, text=True)
        out = subprocess.run([str(d / "rules")], check=True, capture_output=True, text=True)
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
