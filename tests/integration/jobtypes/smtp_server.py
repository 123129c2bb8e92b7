"""A throwaway SMTP server for the EMAIL error handler tests (python3-aiosmtpd).

usage: smtp_server.py MODE CERT KEY OUT
  MODE  starttls: plain SMTP offering STARTTLS; implicit: TLS from the first byte (SMTPS)
Listens on 127.0.0.1 on a free port, prints the port on stdout once it accepts connections,
accepts any AUTH login (only over TLS), and appends every message to OUT with its envelope:
"TLS: yes|no", "AUTH: yes|no", "RCPT: a,b,c" then the message text. Stops at SIGTERM.
"""
import signal
import socket
import ssl
import sys
import threading

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult

mode, cert, key, out = sys.argv[1:5]
context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
context.load_cert_chain(cert, key)


class Handler:
    async def handle_DATA(self, server, session, envelope):
        content = envelope.content.decode("utf-8", "replace")
        with open(out, "a", encoding="utf-8") as f:
            # Implicit TLS: the listener speaks nothing else (session.ssl is only set by STARTTLS).
            tls = mode == "implicit" or session.ssl is not None
            f.write("TLS: %s\n" % ("yes" if tls else "no"))
            f.write("AUTH: %s\n" % ("yes" if session.authenticated else "no"))
            f.write("RCPT: %s\n" % ",".join(envelope.rcpt_tos))
            f.write(content.replace("\r\n", "\n") + "\n")
        return "250 OK"


def authenticator(server, session, envelope, mechanism, auth_data):
    return AuthResult(success=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# A port picked then bound by the Controller: another process may take it in between, so a
# failed start retries with a new one.
kwargs = dict(authenticator=authenticator, auth_require_tls=(mode != "implicit"))
for attempt in range(5):
    port = free_port()
    if mode == "implicit":
        # Implicit TLS: aiosmtpd does not see the TLS under it (session.ssl is only set by
        # STARTTLS), but nothing reaches it without TLS: AUTH need not wait for STARTTLS.
        controller = Controller(Handler(), hostname="127.0.0.1", port=port,
                                ssl_context=context, **kwargs)
    else:
        controller = Controller(Handler(), hostname="127.0.0.1", port=port,
                                tls_context=context, require_starttls=False, **kwargs)
    try:
        controller.start()
        break
    except Exception as e:  # a bind failure, most likely
        print("smtp_server: port %d: %s" % (port, e), file=sys.stderr)
else:
    sys.exit(1)
print(port, flush=True)
done = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: done.set())
done.wait()
controller.stop()
