/* A CPython extension for the --native tests, built for every interpreter under test: C that
   calls back into Python (call), C that blocks in pthread_cond_wait with the GIL released
   (wait), a thread that never runs Python code (start_native_thread), and a signal handler
   that never returns (block_in_signal_handler), so that a stack reads Python -> C -> Python ->
   C, a process has a thread only --native-all shows, and a stack crosses a signal frame.
   Written for every CPython from 3.6 on. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_mutex_t never_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never_signalled = PTHREAD_COND_INITIALIZER;
static volatile int woken = 0;  /* never set: the waits below last until the process is killed */
static volatile long calls = 0;
static volatile long native_thread_id = 0;

/* Blocks the calling thread for good in pthread_cond_wait. */
__attribute__((noinline)) static void block_forever(void) {
  pthread_mutex_lock(&never_mutex);
  while (!woken) pthread_cond_wait(&never_signalled, &never_mutex);
  pthread_mutex_unlock(&never_mutex);
}

/* call(callable): returns callable(). The counter after the call keeps it from being a tail
   call, so this function keeps a frame of its own between the two Python frames. */
PyObject* nativeblock_call(PyObject* self, PyObject* callable) {
  (void)self;
  PyObject* result = PyObject_CallObject(callable, NULL);
  calls = calls + 1;
  return result;
}

/* wait(): never returns; other threads keep running Python meanwhile. */
PyObject* nativeblock_wait(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  Py_BEGIN_ALLOW_THREADS
  block_forever();
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
}

void* nativeblock_thread_main(void* unused) {
  (void)unused;
  native_thread_id = (long)syscall(SYS_gettid);
  block_forever();
  return NULL;
}

/* start_native_thread(): starts a thread that never touches the interpreter and returns its
   Linux thread id once it runs. */
PyObject* nativeblock_start_native_thread(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  pthread_t thread;
  if (pthread_create(&thread, NULL, nativeblock_thread_main, NULL) != 0) {
    PyErr_SetString(PyExc_OSError, "pthread_create failed");
    return NULL;
  }
  pthread_detach(thread);
  while (native_thread_id == 0) {
    Py_BEGIN_ALLOW_THREADS
    usleep(1000);
    Py_END_ALLOW_THREADS
  }
  return PyLong_FromLong(native_thread_id);
}

static volatile sig_atomic_t handled = 0;

void nativeblock_signal_handler(int signo) {
  block_forever();  /* the classic hang: a lock taken inside a signal handler */
  handled = signo;  /* after the call: no tail call, the handler keeps its frame */
}

/* block_in_signal_handler(): sends SIGUSR2 to the calling thread, whose handler never
   returns; the GIL is released first. */
PyObject* nativeblock_block_in_signal_handler(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = nativeblock_signal_handler;
  sigemptyset(&action.sa_mask);
  if (sigaction(SIGUSR2, &action, NULL) != 0) return PyErr_SetFromErrno(PyExc_OSError);
  Py_BEGIN_ALLOW_THREADS
  pthread_kill(pthread_self(), SIGUSR2);
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"call", nativeblock_call, METH_O, "call(f) -> f(), from C"},
    {"wait", nativeblock_wait, METH_NOARGS, "block in pthread_cond_wait for good, GIL released"},
    {"start_native_thread", nativeblock_start_native_thread, METH_NOARGS,
     "start a thread that never runs Python; returns its Linux thread id"},
    {"block_in_signal_handler", nativeblock_block_in_signal_handler, METH_NOARGS,
     "block for good in a signal handler of the calling thread"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "nativeblock", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_nativeblock(void) { return PyModule_Create(&module); }
