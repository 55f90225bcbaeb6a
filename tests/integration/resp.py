"""A tiny RESP2/RESP3 client for tests that need the exact wire form.

redis-py hides reply types (and its Debian version has no RESP3), so tests
that check reply shapes use this: `cmd()` returns typed values, `raw()`
returns the exact bytes of one reply.

Typed values: simple strings -> Simple(str), errors -> Error(str),
integers -> int, bulk -> bytes, null -> None, arrays -> list,
maps -> Map(dict-like list of pairs), sets -> Set(list), doubles -> Double,
booleans -> bool, verbatim -> Verbatim(fmt, bytes), push -> Push(list),
big numbers -> BigNum(int).
"""
import socket


class Simple(str):
    pass


class Error(str):
    pass


class Double(float):
    pass


class BigNum(int):
    pass


class Map(list):
    """Pairs in wire order; .dict() for lookup."""

    def dict(self):
        return dict(self)


class Set(list):
    pass


class Push(list):
    pass


class Verbatim(bytes):
    fmt = b"txt"


def encode(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, str):
            a = a.encode()
        elif isinstance(a, int):
            a = str(a).encode()
        elif isinstance(a, float):
            a = repr(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class RespConn:
    def __init__(self, host="127.0.0.1", port=6379, timeout=10.0, unix=None):
        if unix:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(timeout)
            self.sock.connect(unix)
        else:
            self.sock = socket.create_connection((host, port), timeout=timeout)
        self.buf = b""

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self):
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise ConnectionError("connection closed by server")
        self.buf += chunk

    def _line(self):
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                line, self.buf = self.buf[:i], self.buf[i + 2:]
                return line
            self._fill()

    def _exact(self, n):
        while len(self.buf) < n + 2:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def read(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t == b"+":
            return Simple(rest.decode())
        if t == b"-":
            return Error(rest.decode())
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if t == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        if t == b"_":
            return None
        if t == b"%":
            return Map((self.read(), self.read()) for _ in range(int(rest)))
        if t == b"~":
            return Set(self.read() for _ in range(int(rest)))
        if t == b">":
            return Push(self.read() for _ in range(int(rest)))
        if t == b",":
            return Double(float(rest))
        if t == b"#":
            return rest == b"t"
        if t == b"(":
            return BigNum(int(rest))
        if t == b"=":
            data = self._exact(int(rest))
            v = Verbatim(data[4:])
            v.fmt = data[:3]
            return v
        raise ValueError("bad reply type %r" % line)

    def raw(self):
        """The exact bytes of the next reply."""
        start = len(self.buf)
        # Parse to find the end, keeping a copy of the consumed bytes.
        saved = self.buf
        consumed = []
        orig_fill = self._fill

        def fill():
            before = len(self.buf)
            orig_fill()
            consumed.append(self.buf[before:])

        self._fill = fill
        try:
            self.read()
        finally:
            self._fill = orig_fill
        total = saved + b"".join(consumed)
        used = len(total) - len(self.buf)
        del start
        return total[:used]

    def cmd(self, *args):
        self.send(encode(*args))
        return self.read()

    def cmd_raw(self, *args):
        self.send(encode(*args))
        return self.raw()


def parse_commands(data):
    """The commands of a RESP stream of arrays of bulk strings."""
    cmds, i = [], 0
    while i < len(data):
        assert data[i:i + 1] == b"*", data[i:i + 40]
        e = data.index(b"\r\n", i)
        n = int(data[i + 1:e])
        i = e + 2
        args = []
        for _ in range(n):
            assert data[i:i + 1] == b"$"
            e = data.index(b"\r\n", i)
            ln = int(data[i + 1:e])
            args.append(data[e + 2:e + 2 + ln])
            i = e + 2 + ln + 2
        cmds.append(args)
    return cmds
