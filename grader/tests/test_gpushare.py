"""The GPU gate (gradelib.gpushare): how many runs share the GPU, shared runs side by side up to that
count, a run alone excluding every other (in this process and in others), and a run waiting to be
alone served before shared runs that come after it. And what a run cost (harness.run_costs)."""
import contextlib
import fcntl
import os
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from unittest import mock

from gradelib import gpushare, harness

GIB = 1 << 30
HOLD = 0.3  # seconds a test's holder keeps the GPU
GRADER_DIR = os.path.dirname(os.path.dirname(gpushare.__file__))  # on the path of a test's other processes


class SharersTest(unittest.TestCase):
    def test_one_per_core_and_per_two_gib_at_most_sixteen(self):
        with mock.patch.dict(os.environ, {gpushare.SHARERS_ENV: ""}):
            self.assertEqual(gpushare.sharers({"total_memory_bytes": 80 * GIB}, cpus=16), 16)
            self.assertEqual(gpushare.sharers({"total_memory_bytes": 80 * GIB}, cpus=64), gpushare.MAX_SHARERS)
            self.assertEqual(gpushare.sharers({"total_memory_bytes": 80 * GIB}, cpus=4), 4)
            self.assertEqual(gpushare.sharers({"total_memory_bytes": 15 * GIB}, cpus=16), 7)
            self.assertEqual(gpushare.sharers({"total_memory_bytes": GIB}, cpus=16), 1)

    def test_unknown_memory_shares_nothing(self):
        with mock.patch.dict(os.environ, {gpushare.SHARERS_ENV: ""}):
            self.assertEqual(gpushare.sharers(None, cpus=16), 1)
            self.assertEqual(gpushare.sharers({"name": "an old probe document"}, cpus=16), 1)

    def test_the_environment_decides_when_set(self):
        with mock.patch.dict(os.environ, {gpushare.SHARERS_ENV: "3"}):
            self.assertEqual(gpushare.sharers({"total_memory_bytes": 80 * GIB}, cpus=16), 3)
        with mock.patch.dict(os.environ, {gpushare.SHARERS_ENV: "0"}):
            self.assertEqual(gpushare.sharers(None), 1)
        with mock.patch.dict(os.environ, {gpushare.SHARERS_ENV: "many"}):
            with self.assertRaises(SystemExit):
                gpushare.sharers(None)


class Timeline:
    """When each holder entered and left, to compare afterwards."""

    def __init__(self):
        self.lock = threading.Lock()
        self.spans = {}

    def hold(self, gate, name, alone, seconds=HOLD, entered=None, slots=1):
        with gate.held(alone, slots):
            start = time.monotonic()
            if entered is not None:
                entered.set()
            time.sleep(seconds)
            end = time.monotonic()
        with self.lock:
            self.spans[name] = (start, end)

    def overlap(self, a, b):
        (s1, e1), (s2, e2) = self.spans[a], self.spans[b]
        return s1 < e2 and s2 < e1

    def most_at_once(self):
        events = sorted([(s, 1) for s, _ in self.spans.values()] + [(e, -1) for _, e in self.spans.values()])
        now = most = 0
        for _, step in events:
            now += step
            most = max(most, now)
        return most


class GateTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.line = Timeline()

    def tearDown(self):
        self.tmp.cleanup()

    def gate(self, count):
        return gpushare.Gate(count, folder=self.tmp.name)

    def start(self, *args, **kw):
        thread = threading.Thread(target=self.line.hold, args=args, kwargs=kw)
        thread.start()
        return thread

    def test_shared_runs_overlap_up_to_the_count(self):
        gate = self.gate(2)
        threads = [self.start(gate, k, False) for k in range(4)]
        for t in threads:
            t.join()
        self.assertEqual(self.line.most_at_once(), 2)

    def test_a_run_alone_overlaps_no_other(self):
        gate = self.gate(4)
        entered = threading.Event()
        first = self.start(gate, "shared before", False, entered=entered)
        entered.wait()
        alone = self.start(gate, "alone", True)
        time.sleep(0.05)
        later = [self.start(gate, "shared after %d" % k, False) for k in range(2)]
        for t in [first, alone] + later:
            t.join()
        for name in self.line.spans:
            if name != "alone":
                self.assertFalse(self.line.overlap("alone", name), name)
        # the turnstile: shared runs asked for after the run alone began waiting come after it
        for k in range(2):
            self.assertGreaterEqual(self.line.spans["shared after %d" % k][0], self.line.spans["alone"][1])

    def test_runs_alone_take_turns(self):
        gate = self.gate(4)
        threads = [self.start(gate, k, True, seconds=0.1) for k in range(3)]
        for t in threads:
            t.join()
        self.assertEqual(self.line.most_at_once(), 1)

    def test_runs_alone_queued_during_one_go_before_a_shared_run_queued_earlier(self):
        """The shared runs drain once for every run alone that waits: a shared run asked for while the
        GPU is held alone does not start between the runs alone that queue after it."""
        gate = self.gate(4)
        entered = threading.Event()
        first = self.start(gate, "alone first", True, entered=entered, seconds=0.3)
        entered.wait()
        shared = self.start(gate, "shared", False, seconds=0.05)
        time.sleep(0.05)
        queued = []
        for k in range(2):
            queued.append(self.start(gate, "alone %d" % k, True, seconds=0.05))
            time.sleep(0.05)
        for t in [first, shared] + queued:
            t.join()
        for k in range(2):
            self.assertLessEqual(self.line.spans["alone %d" % k][1], self.line.spans["shared"][0], k)

    def test_a_run_waiting_alone_is_seen_until_it_holds_the_gpu(self):
        """alone_waiting: what a shared case past its limit alone asks before it gives way."""
        gate = self.gate(4)
        self.assertFalse(gate.alone_waiting())
        entered, alone_entered = threading.Event(), threading.Event()
        shared = self.start(gate, "shared", False, entered=entered, seconds=0.5)
        entered.wait()
        self.assertFalse(gate.alone_waiting(), "a shared run is no run alone")
        alone = self.start(gate, "alone", True, entered=alone_entered, seconds=0.3)
        time.sleep(0.1)
        self.assertTrue(gate.alone_waiting())
        alone_entered.wait()
        self.assertFalse(gate.alone_waiting(), "holding the GPU, it waits no more")
        for t in (shared, alone):
            t.join()
        self.assertFalse(gate.alone_waiting())

    def test_a_run_of_several_slots_leaves_only_the_rest_to_others(self):
        gate = self.gate(4)
        entered = threading.Event()
        heavy = self.start(gate, "three slots", False, entered=entered, slots=3)
        entered.wait()
        singles = [self.start(gate, k, False, seconds=0.1) for k in range(3)]
        for t in [heavy] + singles:
            t.join()
        beside = [k for k in range(3) if self.line.overlap("three slots", k)]
        self.assertTrue(beside, "no run of one slot shared the GPU with the run of three")
        for a in beside:
            for b in beside:
                if a != b:
                    self.assertFalse(self.line.overlap(a, b), "two runs of one slot beside a run of three of four")

    def test_two_runs_of_two_slots_share_a_gate_of_four(self):
        gate = self.gate(4)
        threads = [self.start(gate, k, False, slots=2) for k in range(2)]
        for t in threads:
            t.join()
        self.assertTrue(self.line.overlap(0, 1), "two runs of two slots took turns on four slots")

    def test_a_run_of_more_slots_than_there_are_holds_the_gpu_alone(self):
        gate = self.gate(2)
        entered = threading.Event()
        heavy = self.start(gate, "heavy", False, entered=entered, slots=3)
        entered.wait()
        other = self.start(gate, "shared", False, seconds=0.05)
        for t in (heavy, other):
            t.join()
        self.assertFalse(self.line.overlap("heavy", "shared"))

    def test_runs_of_one_slot_wait_behind_a_run_waiting_for_several(self):
        """A run that waits for several slots is not starved: a run of one slot asked for meanwhile
        takes none of the slots it waits for."""
        gate = self.gate(2)
        entered = threading.Event()
        first = self.start(gate, "first", False, entered=entered)
        entered.wait()
        heavy = self.start(gate, "two slots", False, slots=2, seconds=0.1)
        time.sleep(0.05)
        later = self.start(gate, "later", False, seconds=0.05)
        for t in (first, heavy, later):
            t.join()
        self.assertGreaterEqual(self.line.spans["two slots"][0], self.line.spans["first"][1])
        self.assertGreaterEqual(self.line.spans["later"][0], self.line.spans["two slots"][1])

    def test_slots_for_a_run_by_its_memory(self):
        self.assertEqual(gpushare.slots_for(None), 1)
        self.assertEqual(gpushare.slots_for(gpushare.BYTES_PER_SHARER), 1)
        self.assertEqual(gpushare.slots_for(gpushare.BYTES_PER_SHARER + 1), 2)
        self.assertEqual(gpushare.slots_for(9 * GIB), 5)

    def test_a_thread_holding_the_gpu_alone_holds_it_for_its_runs_within(self):
        """A grader takes the GPU alone once for a submission's runs alone: those runs, from the same
        thread, do not wait for it again (they would wait for themselves), and no other run overlaps."""
        gate = self.gate(4)
        entered = threading.Event()
        with gate.held(True):
            other = self.start(gate, "shared", False, entered=entered)
            for alone in (True, False):
                with gate.held(alone) as waited:
                    self.assertEqual(waited, 0.0)
            self.assertFalse(entered.wait(HOLD), "a shared run started while the GPU was held alone")
        other.join()
        self.assertTrue(entered.is_set())
        with gate.held(True) as waited:  # released with the outer hold: taken afresh
            self.assertLess(waited, 1)

    @contextlib.contextmanager
    def another_process_holding(self, held_args):
        """Another process holding a gate of 4 in this test's folder, held(*held_args), for 3 HOLDs:
        the body runs once it holds it."""
        script = ("import sys, time; sys.path.insert(0, %r)\n"
                  "from gradelib import gpushare\n"
                  "with gpushare.Gate(4, folder=%r).held(*%r):\n"
                  "    print('holding', flush=True); time.sleep(%r)\n"
                  % (GRADER_DIR, self.tmp.name, held_args, 3 * HOLD))
        other = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, universal_newlines=True)
        try:
            self.assertEqual(other.stdout.readline().strip(), "holding")
            yield
        finally:
            other.wait()
            other.stdout.close()

    def test_another_process_alone_holds_this_one_off(self):
        with self.another_process_holding((True,)):
            started = time.monotonic()
            with self.gate(4).held(False) as waited:
                self.assertGreater(time.monotonic() - started, 2 * HOLD)
                self.assertGreater(waited, 2 * HOLD)

    def test_another_process_with_three_slots_of_four_leaves_this_one_one(self):
        with self.another_process_holding((False, 3)):
            gate = self.gate(4)
            threads = [self.start(gate, k, False, seconds=0.1) for k in range(2)]
            for t in threads:
                t.join()
            self.assertFalse(self.line.overlap(0, 1), "two runs of one slot beside another process's three of four")

    def test_a_slot_let_go_is_taken_by_another_process_whichever_it_is(self):
        """A shared run of another process waits for any slot, not one of its own choosing: here the
        slot let go is the one its pid would not pick (pid % count), and the other stays held."""
        gate = self.gate(2)
        held = []
        for k in range(2):
            fd = gate._open("slot-%d" % k)
            fcntl.flock(fd, fcntl.LOCK_EX)
            held.append(fd)
        script = ("import sys; sys.path.insert(0, %r)\n"
                  "from gradelib import gpushare\n"
                  "with gpushare.Gate(2, folder=%r).held(False):\n"
                  "    print('holding', flush=True)\n"
                  % (GRADER_DIR, self.tmp.name))
        other = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, universal_newlines=True)
        try:
            time.sleep(HOLD)
            os.close(held.pop(1 - other.pid % 2))
            self.assertEqual(other.wait(5), 0)
            self.assertEqual(other.stdout.read().strip(), "holding")
        finally:
            for fd in held:
                os.close(fd)
            if other.poll() is None:
                other.kill()
                other.wait()
            other.stdout.close()

    def test_holders_that_take_their_slot_again_at_once_let_a_waiting_process_in(self):
        """Every slot held by other processes' threads that take a slot again as soon as they let one go
        (a shared run, then the memcheck run): a process waiting for a slot gets the next one let go, not
        one only when its look for a free lock falls between two holds (seconds, measured without it)."""
        gate = self.gate(4)
        loop = ("import sys, threading, time; sys.path.insert(0, %r)\nfrom gradelib import gpushare\n"
                "gate = gpushare.Gate(4, folder=%r)\n"
                "def hold():\n"
                "    while True:\n"
                "        with gate.held(False):\n"
                "            time.sleep(%r)\n"
                "for _ in range(2):\n"
                "    threading.Thread(target=hold).start()\n"
                % (GRADER_DIR, self.tmp.name, HOLD))
        holders = [subprocess.Popen([sys.executable, "-c", loop]) for _ in range(2)]
        waits = []
        try:
            time.sleep(3 * HOLD)  # the four slots are theirs by now
            for _ in range(4):
                started = time.monotonic()
                with gate.held(False):
                    waits.append(time.monotonic() - started)
                time.sleep(HOLD)  # theirs again
        finally:
            for process in holders:
                process.kill()
                process.wait()
        self.assertLess(max(waits), 3 * HOLD, waits)

    def test_a_thread_holding_the_gpu_alone_takes_no_place_among_those_waiting_for_it(self):
        """A fresh process after a crash, started within the submission's hold alone: it would wait for
        its own hold."""
        gate = self.gate(4)
        with gate.held(True):
            self.assertIsNone(gate.ready())

    def test_few_processes_wait_for_a_run_alone(self):
        """At most READY_BEFORE_ALONE places, over the threads of this process and other processes: a
        CUDA context costs more for every process alive on the GPU."""
        gate = self.gate(4)
        places = [gate.ready() for _ in range(gpushare.READY_BEFORE_ALONE)]
        got = []
        waiter = threading.Thread(target=lambda: got.append(gate.ready()), daemon=True)
        waiter.start()
        script = ("import sys; sys.path.insert(0, %r)\n"
                  "from gradelib import gpushare\n"
                  "gpushare.Gate(4, folder=%r).ready()\n"
                  % (GRADER_DIR, self.tmp.name))
        other = subprocess.Popen([sys.executable, "-c", script])
        try:
            waiter.join(HOLD)
            self.assertEqual(got, [], "a place beyond READY_BEFORE_ALONE in this process")
            with self.assertRaises(subprocess.TimeoutExpired):
                other.wait(HOLD)  # nor in another
            for let_go in places:
                let_go()
            waiter.join(5)
            self.assertEqual(len(got), 1, "a place let go is taken")
            self.assertEqual(other.wait(5), 0)
            got[0]()
        finally:
            if other.poll() is None:
                other.kill()
                other.wait()

    def test_a_holder_that_dies_releases_the_gpu(self):
        script = ("import os, sys; sys.path.insert(0, %r)\n"
                  "from gradelib import gpushare\n"
                  "gpushare.Gate(1, folder=%r).held(True).__enter__()\n"
                  "os._exit(9)\n" % (GRADER_DIR, self.tmp.name))
        self.assertEqual(subprocess.run([sys.executable, "-c", script]).returncode, 9)
        with self.gate(1).held(True) as waited:
            self.assertLess(waited, 1)


class ChannelTest(unittest.TestCase):
    """A run's channel (kit_result.h, kit_harness.h): each case's document counts only with its kit-case
    line, and the clock lines split the run into what it cost."""
    NONCE = "abc"

    def channel(self, body):
        return b"kit-nonce abc\n" + body

    def read(self, body):
        cases, clock, why = harness.read_channel(self.channel(body), self.NONCE)
        return [(c.doc, c.why, c.done) for c in cases], clock, why

    def test_each_document_is_done_with_its_case_line(self):
        cases, clock, why = self.read(b'{"value": 1}\nkit-case 0 1 2\n{"value": 2}\nkit-case 1 2 3\n'
                                      b'kit-clock 5 6 7\n')
        self.assertEqual(cases, [({"value": 1}, None, True), ({"value": 2}, None, True)])
        self.assertEqual((clock, why), ([5, 6, 7], None))

    def test_a_document_without_its_case_line_is_not_done(self):
        cases, clock, _ = self.read(b'{"value": 1}\nkit-case 0 1 2\n{"value": 2}\n')
        self.assertEqual(cases, [({"value": 1}, None, True), ({"value": 2}, None, False)])
        self.assertIsNone(clock)

    def test_broken_channels(self):
        self.assertEqual(self.read(b"kit-case 0 1 2\n")[0], [(None, "it wrote no result on the grader's channel", True)])
        self.assertIn("not valid JSON", self.read(b'{"value": \nkit-case 0 1 2\n')[0][0][1])
        self.assertIn("not a JSON object", self.read(b'[1]\nkit-case 0 1 2\n')[0][0][1])
        self.assertIn("not valid JSON", self.read(b'{"value": 1}\n{"value": 2}\nkit-case 0 1 2\n')[0][0][1])
        self.assertEqual(self.read(b'{"value": 1}\nkit-case 3 1 2\n')[0],
                         [(None, "its result's case line was not the kit's", False)])
        self.assertEqual(harness.read_channel(b"kit-nonce abd\n{}\nkit-case 0 1 2\n", self.NONCE)[2],
                         "its result did not carry this run's nonce (not written by the kit's harness for this run)")
        self.assertEqual(harness.read_channel(None, self.NONCE)[2], "its result was too large to read")

    def costs(self, body, spawned, ended, waited, count):
        cases, clock, _ = harness.read_channel(self.channel(body), self.NONCE)
        return harness.run_costs(cases, clock, spawned, ended, waited, count)

    def test_the_clock_lines_split_the_run(self):
        body = (b'{"value": 1}\nkit-case 0 1400000000 1500000000\n{"value": 2}\nkit-case 1 1500000000 1550000000\n'
                b"kit-clock 1100000000 1400000000 1550000000\n")
        self.assertEqual(self.costs(body, 1000000000, 1600000000, 0.25, 2),
                         [{"wait_s": 0.25, "total_s": 0.5, "start_s": 0.1, "context_s": 0.3, "case_s": 0.1},
                          {"total_s": 0.1, "case_s": 0.05, "exit_s": 0.05}])

    def test_a_hold_splits_the_run_and_its_wait_is_the_next_cases(self):
        """A run that waited at case 1's hold (kit-hold 1) from 1.5 s until its go at 2.0 s: case 1's span
        starts at the go, and the 0.4 s the grader waited there for the GPU is case 1's wait."""
        body = (b'{"value": 1}\nkit-case 0 1400000000 1500000000\nkit-hold 1\n{"value": 2}\n'
                b"kit-case 1 2000000000 2100000000\nkit-clock 1100000000 1400000000 2100000000\n")
        cases, clock, _ = self.read(body)
        self.assertEqual(cases, [({"value": 1}, None, True), ({"value": 2}, None, True)])
        cases, clock, _ = harness.read_channel(self.channel(body), self.NONCE)
        got = harness.run_costs(cases, clock, 1000000000, 2200000000, 0.25, 2, resumed={1: (2000000000, 0.4)})
        self.assertEqual(got, [{"wait_s": 0.25, "total_s": 0.5, "start_s": 0.1, "context_s": 0.3, "case_s": 0.1},
                               {"wait_s": 0.4, "total_s": 0.2, "case_s": 0.1, "exit_s": 0.1}])

    def test_the_case_a_run_ended_on_takes_the_rest(self):
        body = b'{"value": 1}\nkit-case 0 1400000000 1500000000\nkit-clock 1100000000 1400000000 1500000000\n'
        self.assertEqual(self.costs(body, 1000000000, 1600000000, 0, 3)[1:], [{"case_s": 0.1, "total_s": 0.1}, {}])

    def test_without_a_clock_line_only_the_whole(self):
        body = b'{"value": 1}\nkit-case 0 1 2\n'
        self.assertEqual(self.costs(body, 0, 500000000, 0, 1), [{"wait_s": 0, "total_s": 0.5}])
        self.assertEqual(harness.run_costs([], None, 0, 500000000, 0, 2), [{"wait_s": 0, "total_s": 0.5}, {}])

    def test_a_run_stopped_before_its_clock_line_says_it_made_its_context(self):
        """made_ns: when the channel's first line came (the harness writes it once its context is made)."""
        self.assertEqual(harness.run_costs([], None, 1000000000, 3000000000, 0.5, 2, made_ns=1250000000),
                         [{"wait_s": 0.5, "total_s": 2.0, "start_context_s": 0.25}, {}])
        self.assertEqual(harness.run_costs([], None, 1000000000, 3000000000, 0, 1, made_ns=900000000),
                         [{"wait_s": 0, "total_s": 2.0}])  # not within the run
        body = b'{"value": 1}\nkit-case 0 1400000000 1500000000\nkit-clock 1100000000 1400000000 1500000000\n'
        cases, clock, _ = harness.read_channel(self.channel(body), self.NONCE)
        self.assertNotIn("start_context_s", harness.run_costs(cases, clock, 1000000000, 1600000000, 0, 1,
                                                              made_ns=1400000000)[0])  # the clock says it all

    def test_a_clock_outside_the_run_is_not_believed(self):
        body = b'{"value": 1}\nkit-case 0 1400000000 1500000000\nkit-clock 900000000 1400000000 1500000000\n'
        self.assertEqual(self.costs(body, 1000000000, 1600000000, 0, 1), [{"wait_s": 0, "total_s": 0.6}])
        body = b'{"value": 1}\nkit-case 0 1400000000 1500000000\nkit-clock 1100000000 1000000000 1500000000\n'
        self.assertEqual(self.costs(body, 1000000000, 1600000000, 0, 1), [{"wait_s": 0, "total_s": 0.6}])

    def test_a_garbled_clock_line_tells_nothing(self):
        body = b'{"value": 1}\nkit-case 0 1 2\nkit-clock soon\n'
        cases, clock, why = self.read(body)
        self.assertEqual((cases, clock, why), ([({"value": 1}, None, True)], None, None))
        self.assertEqual(self.costs(body, 0, 500000000, 0, 1), [{"wait_s": 0, "total_s": 0.5}])


if __name__ == "__main__":
    unittest.main()


def _gpu(token, bus="", available=True, count=1, name="NVIDIA H100 80GB HBM3"):
    from gradelib import gpu as gpu_mod
    return gpu_mod.GpuInfo(available, "" if available else "the probe kernel failed",
                           {"name": name, "cc_major": 9, "cc_minor": 0, "total_memory_bytes": 80 << 30},
                           token=token, count=count, pci_bus_id=bus)


class SeveralGpusTest(unittest.TestCase):
    """A host with several GPUs: each probed alone, a gate each, a grading's runs on its GPU only."""

    def usable(self, probes, chosen=None, visible=None, count=4, need=None, pid=0):
        from gradelib import gpu as gpu_mod
        first = _gpu(None, "0000:01:00.0", count=count)
        env = {k: v for k, v in os.environ.items() if k not in (gpu_mod.VISIBLE, gpu_mod.GPUS_ENV)}
        if visible is not None:
            env[gpu_mod.VISIBLE] = visible
        asked = []

        def probe(sandboxed, token=None):
            asked.append(token)
            return probes[token]
        with mock.patch.dict(os.environ, env, clear=True), mock.patch.object(gpu_mod, "detect", return_value=first), \
                mock.patch.object(gpu_mod, "_probe", side_effect=probe), mock.patch("os.getpid", return_value=pid):
            return gpu_mod.usable(False, chosen, need), asked

    def test_one_gpu_is_left_as_the_grader_sees_it(self):
        (gpus, left_out), asked = self.usable({}, count=1)
        self.assertEqual([g.token for g in gpus], [None])
        self.assertEqual((left_out, asked), ([], []))

    def test_every_gpu_probed_and_one_that_fails_left_out(self):
        probes = {"0": _gpu("0", "0000:01:00.0"), "1": _gpu("1", "0000:02:00.0", available=False),
                  "2": _gpu("2", "0000:03:00.0")}
        (gpus, left_out), asked = self.usable(probes, count=3)
        self.assertEqual(asked, ["0", "1", "2"])
        self.assertEqual([g.token for g in gpus], ["0", "2"])
        self.assertEqual(left_out, [("1", "the probe kernel failed")])
        # one submission's grader probes from its turn on until one passes
        (gpus, left_out), asked = self.usable(probes, count=3, need=1, pid=1)
        self.assertEqual((asked, [g.token for g in gpus]), (["1", "2"], ["2"]))
        (gpus, _), asked = self.usable(probes, count=3, need=1, pid=3)
        self.assertEqual((asked, [g.token for g in gpus]), (["0"], ["0"]))

    def test_the_entries_of_cuda_visible_devices_and_a_choice(self):
        probes = {t: _gpu(t, "0000:0%s:00.0" % t[-1]) for t in ("3", "5", "GPU-ab12")}
        (gpus, _), asked = self.usable(probes, visible="3,5", count=2)
        self.assertEqual(asked, ["3", "5"])
        (gpus, _), asked = self.usable(probes, chosen="GPU-ab12", count=2)
        self.assertEqual(asked, ["GPU-ab12"])
        self.assertEqual([g.token for g in gpus], ["GPU-ab12"])

    def test_a_pool_spreads_submissions_over_the_least_busy(self):
        from gradelib import gpu as gpu_mod
        pool = gpu_mod.GpuPool([_gpu("0", "a"), _gpu("1", "b")], None)
        with pool.checkout() as one, pool.checkout() as two:
            self.assertEqual({one.token, two.token}, {"0", "1"})
            with pool.checkout() as three:
                self.assertIn(three.token, ("0", "1"))
        # graders side by side start on different GPUs: the tie goes by the process id
        with mock.patch("os.getpid", return_value=7):
            with pool.checkout() as first:
                self.assertEqual(first.token, "1")
        none = gpu_mod.GpuInfo(False, "no GPU")
        with gpu_mod.GpuPool([], none).checkout() as got:
            self.assertIs(got, none)

    def test_a_gate_and_an_environment_per_gpu(self):
        a, b = _gpu("0", "0000:01:00.0"), _gpu("1", "0000:02:00.0")
        self.assertEqual(gpushare.visible_env(), {})
        self.assertIsNone(gpushare.run_env())
        default = gpushare.gate()
        with gpushare.on_gpu(a):
            gate_a = gpushare.gate()
            self.assertEqual(gpushare.visible_env(), {"CUDA_VISIBLE_DEVICES": "0"})
            self.assertEqual(gpushare.run_env()["CUDA_VISIBLE_DEVICES"], "0")
            policy = harness.run_policy("/bin/true")
            self.assertIn('"CUDA_VISIBLE_DEVICES": "0"', policy.to_json())
            with gpushare.on_gpu(b):
                gate_b = gpushare.gate()
            self.assertIs(gpushare.gate(), gate_a)
        self.assertEqual(len({default.folder, gate_a.folder, gate_b.folder}), 3)
        self.assertTrue(gate_a.folder.endswith("-0000_01_00_0"))
        self.assertIs(gpushare.gate(), default)
        # a GPU of no token (the only one the grader sees, CUDA_VISIBLE_DEVICES=0 on this host) has the
        # gate of its bus id, as for a grader that picked it among several; its runs see what the grader sees
        with gpushare.on_gpu(_gpu(None, "0000:01:00.0")):
            self.assertIs(gpushare.gate(), gate_a)
            self.assertEqual(gpushare.visible_env(), {})
            self.assertIsNone(gpushare.run_env())


@contextlib.contextmanager
def probe_machine(fake_run):
    """gpu._probe on a machine faked down to its probe's run (fake_run(argv, timeout, cwd, env) writes
    cwd/probe.json): a driver, the probe built, the sandbox a no-op."""
    from gradelib import gpu as gpu_mod
    with tempfile.TemporaryDirectory() as build_root, contextlib.ExitStack() as stack:
        for patch in (mock.patch.object(gpu_mod, "driver_present", return_value=True),
                      mock.patch.dict(os.environ, {k: v for k, v in os.environ.items() if k != "KIT_NO_GPU"},
                                      clear=True),
                      mock.patch.object(gpu_mod.paths, "BUILD_ROOT", build_root),
                      mock.patch.object(gpu_mod.build, "run_make", return_value=mock.Mock(ok=True)),
                      mock.patch.object(gpu_mod.build, "cuda_arch", return_value="90"),
                      mock.patch.object(gpu_mod.sandbox, "wrap", side_effect=lambda policy, argv: argv),
                      mock.patch.object(gpu_mod.process, "run_bounded", side_effect=fake_run)):
            stack.enter_context(patch)
        os.makedirs(os.path.join(build_root, "probe", "sm_90"))
        yield gpu_mod


class ProbeReasonTest(unittest.TestCase):
    def test_a_gpu_that_is_not_there_is_not_blamed_on_the_sandbox(self):
        """A chosen GPU that fails outside the sandbox as well is left out for its own reason."""
        outside = []
        doc = '{"gpu": false, "dp_ok": false, "reason": "no CUDA GPU: cudaGetDeviceCount: cudaErrorNoDevice"}'

        def fake_run(argv, timeout, cwd=None, env=None):
            with open(os.path.join(cwd, "probe.json"), "w") as f:
                f.write(doc)
            return mock.Mock(describe=lambda *a: "exited", output="")
        with probe_machine(fake_run) as gpu_mod:
            def probe(sandboxed, token=None):
                outside.append((sandboxed, token))
                return gpu_mod.GpuInfo(False, "no CUDA GPU: cudaGetDeviceCount: cudaErrorNoDevice")
            real = gpu_mod._probe
            with mock.patch.object(gpu_mod, "_probe", side_effect=lambda s, t=None: real(s, t) if s else probe(s, t)):
                info = gpu_mod._probe(True, "7")
        self.assertFalse(info.available)
        self.assertEqual(outside, [(False, "7")])
        self.assertNotIn("sandbox", info.reason)


class ProbeGateTest(unittest.TestCase):
    def test_the_probe_holds_every_gpu_shared(self):
        """The probe's context and launch go through every GPU's gate, shared (it learns which GPU it ran on
        only from its own report): while it runs, no run holds any GPU alone (a timing run that has one
        waits for nothing else's work). So for a GPU picked among several (a token) too."""
        with tempfile.TemporaryDirectory() as tmp:
            base = os.path.join(tmp, "gate")
            folders = [base, base + "-0000_01_00_0", base + "-0000_02_00_0"]
            for folder in folders + [base + "0-another-user"]:
                os.makedirs(folder)
            seen = []

            def fake_run(argv, timeout, cwd=None, env=None):
                for folder in folders + [base + "0-another-user"]:
                    fd = os.open(os.path.join(folder, "gpu"), os.O_RDWR | os.O_CREAT, 0o600)
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        seen.append((os.path.basename(folder), "could be held alone"))
                    except BlockingIOError:
                        seen.append((os.path.basename(folder), "shared"))
                    finally:
                        os.close(fd)
                with open(os.path.join(cwd, "probe.json"), "w") as f:
                    f.write('{"gpu": true, "dp_ok": true, "device": {"name": "fake"}}')
                return mock.Mock(describe=lambda *a: "exited", output="")
            with mock.patch.object(gpushare, "gate_dir", lambda info=None: base), probe_machine(fake_run) as gpu_mod:
                for token in (None, "1"):
                    del seen[:]
                    info = gpu_mod._probe(False, token)
                    self.assertTrue(info.available, info.reason)
                    self.assertEqual(seen, [("gate", "shared"), ("gate-0000_01_00_0", "shared"),
                                            ("gate-0000_02_00_0", "shared"), ("gate0-another-user", "could be held alone")])

    def test_waiting_for_one_gpu_holds_no_other(self):
        """While the probe waits for a GPU held alone, it holds no other GPU's gate: a run alone on another
        GPU starts at once, not after the first GPU's run alone has ended."""
        with tempfile.TemporaryDirectory() as tmp:
            base = os.path.join(tmp, "gate")
            first, second = base + "-0000_01_00_0", base + "-0000_02_00_0"
            line, busy_second = Timeline(), threading.Event()
            held_alone = threading.Thread(target=line.hold, args=(gpushare.Gate(4, second), "second alone", True),
                                          kwargs={"seconds": 6 * HOLD, "entered": busy_second})
            held_alone.start()
            busy_second.wait()

            def probe():
                with gpushare.every_gpu_shared():
                    with line.lock:
                        line.spans["probe"] = (time.monotonic(), time.monotonic())
            with mock.patch.object(gpushare, "gate_dir", lambda info=None: base):
                os.makedirs(first)
                prober = threading.Thread(target=probe)
                prober.start()
                time.sleep(HOLD)  # the probe waits for the second GPU meanwhile
                line.hold(gpushare.Gate(4, first), "first alone", True)
                prober.join()
            held_alone.join()
        self.assertLess(line.spans["first alone"][1], line.spans["second alone"][1])
        self.assertGreaterEqual(line.spans["probe"][0], line.spans["second alone"][1])

    def test_holders_again_and_again_do_not_keep_the_probe_waiting(self):
        """Other processes that hold every gate shared again and again (tools/busy_host.py's context loops)
        leave the probe a slot: it enters at once, not when its look for a lock falls between their holds."""
        with tempfile.TemporaryDirectory() as tmp:
            base = os.path.join(tmp, "gate")
            os.makedirs(base + "-0000_01_00_0")
            loop = ("import sys, time; sys.path.insert(0, %r)\nfrom unittest import mock\nfrom gradelib import gpushare\n"
                    "with mock.patch.object(gpushare, 'gate_dir', lambda info=None: %r):\n"
                    "    while True:\n"
                    "        with gpushare.every_gpu_shared():\n"
                    "            time.sleep(%r)\n") % (GRADER_DIR, base, HOLD)
            loops = [subprocess.Popen([sys.executable, "-c", loop]) for _ in range(4)]
            waits = []

            def probe():
                for _ in range(3):
                    started = time.monotonic()
                    with gpushare.every_gpu_shared():
                        waits.append(time.monotonic() - started)
            try:
                time.sleep(3 * HOLD)  # the loops hold the gates by now
                with mock.patch.object(gpushare, "gate_dir", lambda info=None: base):
                    prober = threading.Thread(target=probe)
                    prober.start()
                    prober.join(timeout=30 * HOLD)
            finally:
                for process in loops:
                    process.kill()
                    process.wait()
            prober.join()
        self.assertLess(max(waits), 10 * HOLD, waits)
