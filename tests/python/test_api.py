"""The Python module `xpusim` (build/python): each function returns the dict `xpusim CMD --json`
prints for the same inputs; bad input raises xpusim.InputError (a ValueError) with the
diagnostic; infeasible results are returned. Run by ctest (label python) with PYTHONPATH set and
XS_CLI pointing at build/xpusim."""

import json
import os
import subprocess
import tempfile
import unittest

import xpusim

CLI = os.environ.get("XS_CLI", "build/xpusim")

TRAIN = dict(system="h100-sxm-dgx", model="llama3.1-8b", chips=16, executor="analytical",
             tp=8, pp=1, precision="fp8", global_batch=64, seq_len=4096)
TRAIN_FLAGS = ["--system", "h100-sxm-dgx", "--model", "llama3.1-8b", "--chips", "16", "--executor", "analytical",
               "--tp", "8", "--pp", "1", "--precision", "fp8", "--global-batch", "64", "--seq-len", "4096"]
SERVE = dict(system="h100-sxm-dgx", model="llama3.1-8b", chips=8, tp=2, in_len=512, out_len=64,
             requests=40, rate=4.0, seed=3, ttft_slo="1 s")
SERVE_FLAGS = ["--system", "h100-sxm-dgx", "--model", "llama3.1-8b", "--chips", "8", "--tp", "2", "--in-len", "512",
               "--out-len", "64", "--requests", "40", "--rate", "4", "--seed", "3", "--ttft-slo", "1 s"]


# The CLI runs without the interpreter's LD_PRELOAD: in the sanitizer tree the module needs the
# ASan runtime preloaded into python, while the CLI carries its own (a second copy is refused).
CLI_ENV = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}


def cli_json(*args, expect=0):
    r = subprocess.run([CLI, *args, "--json"], capture_output=True, text=True, env=CLI_ENV)
    assert r.returncode == expect, r.stderr
    return json.loads(r.stdout)


class SameDocumentAsTheCli(unittest.TestCase):
    def test_train_equals_cli_json(self):
        self.assertEqual(xpusim.train(**TRAIN), cli_json("train", *TRAIN_FLAGS))

    def test_train_deadline_solver_equals_cli_json(self):
        keys = dict(system="h100-sxm-dgx", model="llama3.1-8b", seq_len=4096, train_tokens=2e12, deadline="10d")
        doc = xpusim.train(**keys)
        self.assertEqual(doc, cli_json("train", "--system", "h100-sxm-dgx", "--model", "llama3.1-8b", "--seq-len",
                                       "4096", "--train-tokens", "2e12", "--deadline", "10d"))
        self.assertTrue(doc["solver"]["met"])
        self.assertEqual(doc["solver"]["chips"], doc["chips"])

    def test_train_nested_keys_equal_flat_keys(self):
        nested = dict(system="h100-sxm-dgx", model="llama3.1-8b", chips=16, executor="analytical",
                      plan={"tp": 8, "pp": 1, "precision": "fp8"}, workload={"global_batch": 64, "seq_len": 4096})
        self.assertEqual(xpusim.train(**nested), xpusim.train(**TRAIN))

    def test_serve_equals_cli_json(self):
        self.assertEqual(xpusim.serve(**SERVE), cli_json("serve", *SERVE_FLAGS))

    def test_mtp_training_and_a_mamba_only_model_equal_cli_json(self):
        keys = dict(system="h100-sxm-dgx", model="deepseek-v3", chips=1024, executor="analytical", tp=1, pp=16,
                    ep=64, global_batch=2048, seq_len=4096, mtp_layers=1)
        doc = xpusim.train(**keys)
        self.assertEqual(doc["plan"]["mtp_layers"], 1)
        self.assertEqual(doc, cli_json("train", "--system", "h100-sxm-dgx", "--model", "deepseek-v3", "--chips", "1024",
                                       "--executor", "analytical", "--tp", "1", "--pp", "16", "--ep", "64",
                                       "--global-batch", "2048", "--seq-len", "4096", "--mtp-layers", "1"))
        ssm = xpusim.serve(system="h100-sxm-dgx", model="mamba-2.8b", requests=20, in_len=512, out_len=64)
        self.assertEqual(ssm["kv_tokens_per_engine"], 0)
        self.assertGreater(ssm["state_sequences_per_engine"], 0)
        self.assertEqual(ssm, cli_json("serve", "--system", "h100-sxm-dgx", "--model", "mamba-2.8b", "--requests", "20",
                                       "--in-len", "512", "--out-len", "64"))

    def test_catalog_dir_equals_cli_json(self):
        mine = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "catalog")
        keys = dict(TRAIN, system="hypo-accel-x16")
        flags = [f if f != "h100-sxm-dgx" else "hypo-accel-x16" for f in TRAIN_FLAGS]
        doc = xpusim.train(catalog_dir=mine, **keys)
        cli = cli_json("train", *flags, "--catalog-dir", mine)
        self.assertEqual(doc, cli)
        self.assertEqual([e["id"] for e in doc["catalog_user"]], ["hypo-accel", "hypo-accel-x16"])
        with self.assertRaises(xpusim.InputError):
            xpusim.train(**keys)  # not in the shipped catalog

    def test_collective_catalog_model_equal_cli_json(self):
        self.assertEqual(xpusim.collective(system="h100-sxm-dgx", chips=8, op="all-reduce", bytes="1 GiB"),
                         cli_json("collective", "--system", "h100-sxm-dgx", "--chips", "8", "--op", "all-reduce",
                                  "--bytes", "1 GiB"))
        self.assertEqual(xpusim.catalog(), cli_json("catalog", "list"))
        self.assertEqual(xpusim.catalog(id="trn2-ultraserver"), cli_json("catalog", "show", "trn2-ultraserver"))
        self.assertEqual(xpusim.model(), cli_json("model", "list"))
        self.assertEqual(xpusim.model(model="llama3.1-8b", seq=2048),
                         cli_json("model", "show", "llama3.1-8b", "--seq", "2048"))


    def test_validate_equals_cli_json(self):
        public = os.path.join(os.path.dirname(__file__), "..", "..", "data", "validation", "public.csv")
        with open(public) as f:
            lines = f.readlines()
        with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
            f.writelines(lines[:1] + lines[1:4])  # the header and three rows: seconds, not minutes
        try:
            self.assertEqual(xpusim.validate(file=f.name), cli_json("validate", f.name))
            explained = xpusim.validate(file=f.name, explain=True)
            self.assertEqual(explained, cli_json("validate", f.name, "--explain"))
            self.assertIn("explain", explained["rows"][0])
            some = xpusim.validate(file=f.name, rows=lines[2].split(",")[0])
            self.assertEqual(some, cli_json("validate", f.name, "--rows", lines[2].split(",")[0]))
            self.assertEqual(len(some["rows"]), 1)
            with self.assertRaises(xpusim.InputError):
                xpusim.validate(file=f.name, rows="no-such-row-*")
        finally:
            os.unlink(f.name)


class Errors(unittest.TestCase):
    def test_bad_input_raises_input_error_with_the_diagnostic(self):
        self.assertTrue(issubclass(xpusim.InputError, ValueError))
        with self.assertRaises(xpusim.InputError) as e:
            xpusim.train(**dict(TRAIN, precison="fp8"))
        self.assertIn("precison", str(e.exception))
        self.assertIn("did you mean 'precision'", str(e.exception))
        with self.assertRaises(xpusim.InputError) as e:
            xpusim.serve(**dict(SERVE, rate=-1.0))
        self.assertIn("rate", str(e.exception))
        with self.assertRaises(xpusim.InputError) as e:
            xpusim.collective(system="h100-sxm-dgx", chips=8, op="all-too-all", bytes=1024)
        self.assertIn("did you mean 'all-to-all'", str(e.exception))

    def test_unsupported_types_raise_type_error(self):
        with self.assertRaises(TypeError):
            xpusim.train(**dict(TRAIN, chips=object()))

    def test_hostile_values_raise_input_error_never_crash(self):
        # issue 48, class 4: each of these killed the interpreter or raised RuntimeError.
        cycle = {}
        cycle["self"] = cycle
        loop = []
        loop.append(loop)
        deep = []
        for _ in range(100000):
            deep = [deep]
        for value in (cycle, loop, deep):
            with self.assertRaises(xpusim.InputError) as e:
                xpusim.serve(**dict(SERVE, plan=value))
            self.assertIn("nesting deeper than 64", str(e.exception))
        for key, big in (("chips", 2**63), ("in_len", 2**64), ("requests", -2**70)):
            with self.assertRaises(xpusim.InputError) as e:
                xpusim.serve(**dict(SERVE, **{key: big}))
            self.assertIn(key, str(e.exception))
        with self.assertRaises(xpusim.InputError) as e:
            xpusim.catalog(id="")
        self.assertIn("empty id", str(e.exception))
        with self.assertRaises(xpusim.InputError) as e:
            xpusim.train(**dict(TRAIN, plan={"tp": 4}))
        self.assertIn("given twice", str(e.exception))

    def test_concurrent_calls_agree_with_serial_ones(self):
        import concurrent.futures
        calls = [(xpusim.train, TRAIN), (xpusim.serve, SERVE),
                 (xpusim.collective, dict(system="h100-sxm-dgx", chips=8, op="all-reduce", bytes=1 << 20)),
                 (xpusim.catalog, dict(id="h100-sxm-dgx")), (xpusim.model, dict(model="llama3.1-8b"))]
        serial = [json.dumps(f(**kw), sort_keys=True) for f, kw in calls]
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            futures = [pool.submit(f, **kw) for f, kw in calls * 3]
            threaded = [json.dumps(x.result(), sort_keys=True) for x in futures]
        self.assertEqual(threaded, serial * 3)

    def test_infeasible_is_returned_not_raised(self):
        r = xpusim.train(system="h100-sxm-dgx", model="llama3.1-70b", chips=24, executor="analytical", tp=8, pp=1,
                         zero="none", recompute="none", global_batch=24, seq_len=4096)
        self.assertFalse(r["fits"])
        self.assertTrue(r["reason"])


class Sweep(unittest.TestCase):
    GRID = {"command": "train",
            "base": {"system": "h100-sxm-dgx", "model": "llama3.1-8b", "executor": "analytical",
                     "plan": {"tp": 8, "pp": 1}, "workload": {"global_batch": 64, "seq_len": 4096}},
            "grid": {"chips": [8, 16], "precision": ["bf16", "fp8"]}}

    def test_points_in_order_with_documents(self):
        points = xpusim.sweep(self.GRID)
        self.assertEqual([(p["values"]["chips"], p["values"]["precision"]) for p in points],
                         [(8, "bf16"), (8, "fp8"), (16, "bf16"), (16, "fp8")])
        self.assertEqual(points[3]["result"], xpusim.train(**TRAIN))

    def test_path_and_dict_agree(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(self.GRID, f)
        try:
            self.assertEqual(xpusim.sweep(f.name), xpusim.sweep(self.GRID))
        finally:
            os.unlink(f.name)

    def test_frame_has_the_csv_columns(self):
        try:
            import pandas  # noqa: F401
        except ImportError:
            self.skipTest("pandas not installed")
        frame = xpusim.sweep(self.GRID, as_frame=True)
        self.assertEqual(list(frame.columns[:5]), ["chips", "precision", "status", "reason", "step_time_s"])
        self.assertEqual(len(frame), 4)
        self.assertEqual(list(frame["status"]), ["ok"] * 4)

    def test_bad_grid_raises(self):
        with self.assertRaises(xpusim.InputError) as e:
            xpusim.sweep(dict(self.GRID, grid={"chips": []}))
        self.assertIn("grid.chips", str(e.exception))


if __name__ == "__main__":
    unittest.main()
