"""A fresh process for tests/test_pickle.py: unpickle what stdin holds, call it on the
arguments pickled with it, and pickle back the result (or the SrcadError's message)."""

import pickle
import sys

import srcad

if __name__ == "__main__":
    try:
        fn, args = pickle.loads(sys.stdin.buffer.read())
        result = ("ok", fn(*args), type(fn).__name__, len(srcad.transformed._REBUILT))
    except srcad.SrcadError as e:
        result = ("error", str(e), None, None)
    sys.stdout.buffer.write(pickle.dumps(result))
