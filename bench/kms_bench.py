"""KMS benchmark (not a test): what a key-encryption key in a KMS costs beside the local master
key, and what ``keys rewrap`` saves beside re-sealing, against moto's KMS over HTTP (the test
suite's ``tests/kmsserver.py``; a real KMS adds its network round trip to every call).

    .venv-test/bin/python bench/kms_bench.py [--mb 64] [--blobs 50] [--values 1000]

Printed, side by side in one run: sealing and opening ``--blobs`` small blobs (one
``GenerateDataKey`` each; opening in a cold process, one ``Decrypt`` each) under each KEK;
sealing ``--values`` labels (column key reuse: KMS calls per value); and for one ``--mb`` MiB
blob, a re-wrap (key block rewritten, body copied) beside a re-seal (decrypt and encrypt).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pressroom.kek import Keyring, LocalMasterKey
from pressroom.labels import Labels
from pressroom.storage.crypto import EncryptedBlobStore, rewrap_blob
from pressroom.storage.kms import KmsKey
from pressroom.storage.local import LocalBlobStore
from tests.kmsserver import running_kms
from tests.s3server import CREDENTIALS


def timed(step: object) -> float:
    start = time.perf_counter()
    step()  # type: ignore[operator]
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=64)
    parser.add_argument("--blobs", type=int, default=50)
    parser.add_argument("--values", type=int, default=1000)
    args = parser.parse_args()
    for name, value in CREDENTIALS.items():
        os.environ.setdefault({"region_name": "AWS_DEFAULT_REGION"}.get(name, name.upper()), value)
    with running_kms() as kms, tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        small = root / "small"
        small.write_bytes(os.urandom(200_000))
        rings = {
            "local": lambda: Keyring(LocalMasterKey(os.urandom(32))),
            "kms": lambda: Keyring(KmsKey(kms.new_key(), kms.client())),
        }
        names = [f"sources/t/{n}/source" for n in range(args.blobs)]
        print(f"{args.blobs} blobs of 200 kB, each sealed then opened by a cold process:")
        for name, make in rings.items():
            ring = make()
            store = EncryptedBlobStore(LocalBlobStore(root / name), keyring=ring)
            seal = timed(lambda s=store: [s.put_file(k, small) for k in names])
            cold = EncryptedBlobStore(store.inner, keyring=Keyring(ring.current))
            read = timed(lambda c=cold: [c.size(k) for k in names])
            print(
                f"  {name:5}  seal {seal * 1000 / args.blobs:6.2f} ms/blob  "
                f"open (header, data key) {read * 1000 / args.blobs:6.2f} ms/blob"
            )
        before = sum(kms.calls.values())
        labels = Labels(b"s" * 32, kms=rings["kms"]())
        spent = timed(lambda: [labels.seal(f"j{n}", f"case {n}") for n in range(args.values)])
        calls = sum(kms.calls.values()) - before
        print(
            f"{args.values} labels sealed under KMS column keys: {calls} KMS calls "
            f"({spent * 1e6 / args.values:.0f} µs/value)"
        )
        big = root / "big"
        big.write_bytes(os.urandom(args.mb << 20))
        old, new = KmsKey(kms.new_key(), kms.client()), KmsKey(kms.new_key(), kms.client())
        inner = LocalBlobStore(root / "big-store")
        EncryptedBlobStore(inner, keyring=Keyring(old)).put_file("artifacts/t/j/d.pdf", big)
        rewrap_s = timed(lambda: rewrap_blob(inner, "artifacts/t/j/d.pdf", Keyring(new), root))
        back = root / "back"

        def reseal() -> None:
            store = EncryptedBlobStore(inner, keyring=Keyring(old))
            store.get_to_path("artifacts/t/j/d.pdf", back)
            store.put_file("artifacts/t/j/d.pdf", back)

        reseal_s = timed(reseal)
        print(
            f"one {args.mb} MiB blob to a new KMS key: rewrap {rewrap_s:.2f} s "
            f"(key block rewritten, body copied), re-seal {reseal_s:.2f} s (decrypt + encrypt)"
        )


if __name__ == "__main__":
    main()
