"""--native target: Python -> C -> Python -> C. run() calls nativeblock.call (C), which calls
callback() (Python), which records the stack and blocks in nativeblock.wait (C, in
pthread_cond_wait). A thread started by the extension never runs Python (--native-all shows
it); another blocks for good in a C signal handler. Python 3.6 syntax."""
import sys
import threading

import nativeblock
import stackrecord


def callback():
    frames = stackrecord.stack_of(sys._getframe())
    # Recording and blocking share one line, so the line recorded is the line that blocks.
    stackrecord.publish("main", stackrecord._at_line(frames, sys._getframe().f_lineno), blocking=True); nativeblock.wait()  # noqa: E501,E702


def run():
    nativeblock.call(callback)


def in_handler():
    frames = stackrecord.stack_of(sys._getframe())
    stackrecord.publish("signalled", stackrecord._at_line(frames, sys._getframe().f_lineno), blocking=True); nativeblock.block_in_signal_handler()  # noqa: E501,E702


stackrecord.setup(expected=2, native_thread=nativeblock.start_native_thread())
threading.Thread(target=in_handler, name="signalled", daemon=True).start()
run()
