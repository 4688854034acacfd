import os
import unittest

from gradelib import ptx

DATA = os.path.join(os.path.dirname(__file__), "data")


class CalledFunctionsTest(unittest.TestCase):
    def setUp(self):
        with open(os.path.join(DATA, "launch_and_tail_launch.ptx")) as f:
            self.recorded = f.read()

    def test_recorded_ptx_shows_launches_and_error_check(self):
        calls = ptx.called_functions(self.recorded)
        self.assertIn(ptx.DEVICE_LAUNCH, calls)
        self.assertIn(ptx.DEVICE_GET_LAST_ERROR, calls)
        self.assertEqual(ptx.count_calls(self.recorded, ptx.DEVICE_LAUNCH), 2)
        self.assertEqual(ptx.count_calls(self.recorded, ptx.DEVICE_GET_LAST_ERROR), 1)

    def test_stream_of_each_launch(self):
        self.assertEqual(ptx.launch_streams(self.recorded), [ptx.NULL_STREAM, ptx.TAIL_LAUNCH_STREAM])

    def test_kernels_are_found_by_name(self):
        self.assertEqual(sorted(ptx.entries(self.recorded)), ["_Z5childPi", "_Z6parentPi"])
        parent = ptx.kernel_text(self.recorded, "parent")
        self.assertEqual(ptx.launch_streams(parent), [ptx.NULL_STREAM, ptx.TAIL_LAUNCH_STREAM])
        self.assertEqual(ptx.launch_streams(ptx.kernel_text(self.recorded, "child")), [])
        self.assertIsNone(ptx.kernel_text(self.recorded, "par"))
        self.assertIsNotNone(ptx.kernel_text(".entry _Z12nested_helloii(\n", "nested_hello"))

    def test_a_function_and_what_it_calls(self):
        text = (".extern .func (.param .b32 r) helper_decl(\n);\n"
                ".visible .func (.param .b32 r) _Z5outeri(\n) {\n call.uni (r), _Z5inneri, (p);\n}\n"
                ".func (.param .b32 r) _Z5inneri(\n) {\n atom.global.add.u32 %r1, [%rd1], 1;\n}\n"
                ".visible .entry _Z6kernelv(\n) {\n ret;\n}\n")
        defined = ptx.definitions(text)
        self.assertEqual(sorted(defined), ["_Z5inneri", "_Z5outeri", "_Z6kernelv"])
        reached = ptx.reachable_text(defined, "outer")
        self.assertIn("atom.global.add", reached)
        self.assertNotIn("_Z6kernelv", reached)
        self.assertIsNone(ptx.reachable_text(defined, "missing"))

    def test_stream_in_a_register_is_none(self):
        text = ("{ // callseq 7, 0\n.param .b64 param1;\nst.param.b64 \t[param1+0], %rd9;\n"
                "call.uni (retval0), \n__cudaCDP2LaunchDeviceV2, \n(param0, param1);\n} // callseq 7\n")
        self.assertEqual(ptx.launch_streams(text), [None])

    def test_stream_written_without_an_offset(self):
        """CUDA 13.0 compiling for sm_100 and sm_120 writes "[param1]" where it writes "[param1+0]" for
        sm_90: the stream is read either way."""
        def launch(k, operand):
            return ("{ // callseq %d, 0\n.param .b64 param0;\nst.param.b64 \t[param0], %%rd10;\n.param .b64 param1;\n"
                    "st.param.b64 \t[param1], %s;\n.param .b32 retval0;\ncall.uni (retval0), \n"
                    "__cudaCDP2LaunchDeviceV2, \n(param0, param1);\n} // callseq %d\n" % (k, operand, k))
        text = launch(1, "0") + launch(5, "3") + launch(9, "%rd9")
        self.assertEqual(ptx.launch_streams(text), [ptx.NULL_STREAM, ptx.TAIL_LAUNCH_STREAM, None])
        # a form the grader cannot read is neither a constant nor a created stream: no check accepts it
        self.assertEqual(ptx.launch_streams(launch(2, "4").replace("[param1]", "[param10]")), [ptx.UNREAD_STREAM])

    def test_streams_of_lab02s_solution_built_for_sm_100(self):
        with open(os.path.join(DATA, "lab02-solution-sm100.ptx")) as f:
            text = f.read()
        self.assertIn("st.param.b64 \t[param1], 3;", text)
        for kernel in ("race_parent", "consume_parent"):
            self.assertEqual(ptx.launch_streams(ptx.kernel_text(text, kernel)),
                             [ptx.NULL_STREAM, ptx.TAIL_LAUNCH_STREAM], kernel)

    def test_extern_declaration_alone_is_not_a_call(self):
        text = ".extern .func  (.param .b32 func_retval0) __cudaCDP2LaunchDeviceV2\n(\n.param .b64 a\n);\n"
        self.assertNotIn(ptx.DEVICE_LAUNCH, ptx.called_functions(text))

    def test_call_forms(self):
        text = ("call.uni (retval0), \n\t__cudaCDP2GetLastError, \n\t(\n\t);\n"
                "call foo, (param0);\n"
                "call.uni bar;\n")
        self.assertEqual(ptx.called_functions(text), {"__cudaCDP2GetLastError", "foo", "bar"})

    def test_legacy_names_do_not_count_as_cdp2(self):
        text = "call.uni (retval0), cudaLaunchDeviceV2, (a, b);\ncall.uni (retval0), cudaDeviceSynchronize, ();"
        calls = ptx.called_functions(text)
        self.assertNotIn(ptx.DEVICE_LAUNCH, calls)
        self.assertIn("cudaDeviceSynchronize", calls)


if __name__ == "__main__":
    unittest.main()


class ControlFlowTest(unittest.TestCase):
    """Order, not only counts: recorded PTX of Lab 01's solution and of two of its mutants."""

    def kernel(self, name):
        with open(os.path.join(DATA, name)) as f:
            return ptx.kernel_text(f.read(), "diverge_cta")

    def test_solution_checks_its_launch_and_reaches_the_barrier(self):
        body = self.kernel("lab01-solution.ptx")
        self.assertEqual(ptx.unchecked_launches(body), 0)
        self.assertIs(ptx.barrier_can_be_skipped(body), False)

    def test_a_check_before_the_launch_checks_nothing(self):
        body = self.kernel("lab01-check-before-launch.ptx")
        self.assertEqual(ptx.count_calls(body, ptx.DEVICE_GET_LAST_ERROR), 1)  # the count alone looks fine
        self.assertEqual(ptx.unchecked_launches(body), 1)

    def test_a_return_before_the_barrier_is_found(self):
        body = self.kernel("lab01-return-before-barrier.ptx")
        self.assertIs(ptx.barrier_can_be_skipped(body), True)
        self.assertEqual(ptx.unchecked_launches(body), 0)

    def test_one_check_for_two_launches(self):
        with open(os.path.join(DATA, "launch_and_tail_launch.ptx")) as f:
            parent = ptx.kernel_text(f.read(), "parent")
        self.assertEqual(ptx.unchecked_launches(parent), 1)  # the tail launch after the check
        self.assertIsNone(ptx.barrier_can_be_skipped(parent))  # no barrier at all

    def test_branches_and_predicated_returns(self):
        text = """.visible .entry k()
{
	setp.ne.s32 	%p1, %r1, 0;
	@%p1 ret;
	bar.sync 	0;
	@%p1 bra 	$L__BB0_2;
	call.uni (retval0), __cudaCDP2LaunchDeviceV2, (param0, param1);
	@%p1 bra 	$L__BB0_2;
	call.uni (retval0), __cudaCDP2GetLastError, ();
$L__BB0_2:
	ret;
}"""
        self.assertIs(ptx.barrier_can_be_skipped(text), True)  # the predicated ret before bar.sync
        self.assertEqual(ptx.unchecked_launches(text), 1)  # the branch around the check
