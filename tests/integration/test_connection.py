"""PING, ECHO, SELECT, HELLO, AUTH, QUIT, RESET over the wire."""
import pytest
from resp import Error, Map, Simple


def test_ping(conn):
    assert conn.cmd_raw("PING") == b"+PONG\r\n"
    assert conn.cmd_raw("PING", "hi") == b"$2\r\nhi\r\n"
    assert conn.cmd("PING", "a", "b") == Error("ERR wrong number of arguments for 'ping' command")


def test_echo(conn):
    assert conn.cmd("ECHO", "hello") == b"hello"
    assert conn.cmd("ECHO") == Error("ERR wrong number of arguments for 'echo' command")


def test_unknown_command(conn):
    assert conn.cmd("NOPE", "a", "b") == Error(
        "ERR unknown command 'NOPE', with args beginning with: 'a' 'b' ")


def test_select(conn):
    assert conn.cmd("SELECT", "1") == Simple("OK")
    assert conn.cmd("SET", "k", "v1") == Simple("OK")
    assert conn.cmd("SELECT", "0") == Simple("OK")
    assert conn.cmd("GET", "k") is None
    assert conn.cmd("SELECT", "16") == Error("ERR DB index is out of range")
    assert conn.cmd("SELECT", "x") == Error("ERR value is not an integer or out of range")
    # As Redis's getIntFromObjectOrReply: an integer outside a C int first.
    assert conn.cmd("SELECT", "4294967296") == Error(
        "ERR value is out of range, value must between -2147483648 and 2147483647")
    assert conn.cmd("SELECT", "-1") == Error("ERR DB index is out of range")


def test_hello(conn):
    reply = conn.cmd("HELLO", "3")
    assert isinstance(reply, Map)
    d = reply.dict()
    assert d[b"server"] == b"redis"
    assert d[b"proto"] == 3
    assert d[b"mode"] == b"standalone"
    assert d[b"role"] == b"master"
    assert d[b"modules"] == []
    assert conn.cmd_raw("GET", "missing") == b"_\r\n"
    assert conn.cmd("HELLO", "4") == Error("NOPROTO unsupported protocol version")
    assert conn.cmd("HELLO", "x") == Error("ERR Protocol version is not an integer or out of range")
    assert conn.cmd("HELLO", "2", "FOO") == Error("ERR Syntax error in HELLO option 'FOO'")
    reply = conn.cmd("HELLO", "2")
    assert isinstance(reply, list) and reply[0] == b"server"
    assert conn.cmd_raw("GET", "missing") == b"$-1\r\n"


def test_hello_setname(conn):
    conn.cmd("HELLO", "2", "SETNAME", "myname")
    assert conn.cmd("HELLO", "2", "SETNAME", "bad name") == Error(
        "ERR Client names cannot contain spaces, newlines or special characters.")


def test_auth_without_password(conn):
    assert conn.cmd("AUTH", "pw") == Error(
        "ERR AUTH <password> called without any password configured for the default user. "
        "Are you sure your configuration is correct?")


def test_requirepass(new_server):
    srv = new_server("--requirepass", "s3cret")
    c = srv.conn()
    assert c.cmd("GET", "k") == Error("NOAUTH Authentication required.")
    assert c.cmd("PING") == Error("NOAUTH Authentication required.")
    assert c.cmd("AUTH", "wrong") == Error("WRONGPASS invalid username-password pair or user is disabled.")
    assert c.cmd("AUTH", "s3cret") == Simple("OK")
    assert c.cmd("PING") == Simple("PONG")
    c2 = srv.conn()
    assert c2.cmd("HELLO", "3").startswith("NOAUTH HELLO must be called")
    reply = c2.cmd("HELLO", "3", "AUTH", "default", "s3cret")
    assert isinstance(reply, Map)
    assert c2.cmd("AUTH", "someone", "s3cret") == Error(
        "WRONGPASS invalid username-password pair or user is disabled.")
    assert c2.cmd("RESET") == Simple("RESET")
    assert c2.cmd("GET", "k") == Error("NOAUTH Authentication required.")


def test_quit(conn):
    assert conn.cmd("QUIT") == Simple("OK")
    with pytest.raises((ConnectionError, OSError)):
        conn.cmd("PING")
