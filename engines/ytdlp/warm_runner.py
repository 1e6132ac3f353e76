"""A warm yt-dlp: imports yt-dlp once, compiles every extractor's URL pattern, then forks one child per
run, which runs yt-dlp's own main() with the run's arguments, its standard output and error on sockets
the caller opened (engines/ytdlp/warm-runs.ts).

A fresh yt-dlp process spends most of its CPU before it reads a byte: the imports, and compiling the
URL patterns of some 1,900 extractors to find the one for a URL (every one, for a page only the generic
extractor reads). A child forked from here starts with both done, and is still a process of its own:
nothing one run changes reaches another.

Usage: python warm_runner.py SOCKET_PATH. It prints "ready" on stdout once it listens. When its
standard input closes (the caller is gone, or has retired it for a newer yt-dlp) it takes no more runs
and exits once those it has ended; SIGTERM stops them and it at once.

Protocol, on connections to SOCKET_PATH, each opened with one JSON line:
  {"id": ID, "role": "stdout"} and {"id": ID, "role": "stderr"}: the run's output streams;
  {"id": ID, "role": "control", "args": [...], "cwd": DIR}: starts the run once both streams are there.
The control connection then carries JSON lines: {"pid": N}, then {"exit": CODE} or {"signal": N}
(or {"error": TEXT} when the run could not start). Closing it stops the run.
"""
import gc
import json
import os
import selectors
import signal
import socket
import sys
import traceback


def warm():
    import yt_dlp  # noqa: F401
    import yt_dlp.downloader  # noqa: F401
    import yt_dlp.postprocessor  # noqa: F401
    from yt_dlp.extractor import gen_extractor_classes

    for ie in gen_extractor_classes():
        try:
            ie.suitable('https://warm.invalid/')
        except Exception:
            pass
    # what is here now stays put: the children's reference counting then copies fewer pages
    gc.collect()
    gc.freeze()


def read_header(conn):
    conn.settimeout(10)
    data = b''
    while not data.endswith(b'\n'):
        chunk = conn.recv(65536)
        if not chunk:
            raise ValueError('the connection closed before its first line')
        data += chunk
        if len(data) > 4 * 1024 * 1024:
            raise ValueError('the first line is too long')
    conn.settimeout(None)
    return json.loads(data)


def send(conn, message):
    try:
        conn.sendall((json.dumps(message) + '\n').encode())
    except OSError:
        pass


def run_child(args, cwd, out, err, keep_open):
    """In the forked child: yt-dlp's main() on the run's streams, then an exit as the program's."""
    code = 0
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        for s in keep_open:
            s.close()
        os.chdir(cwd)
        import yt_dlp
        from yt_dlp.utils.networking import random_user_agent, std_headers

        # a fresh process draws its browser User-Agent when it imports yt-dlp: each run draws its own
        # (the random module itself is reseeded in a forked child)
        std_headers['User-Agent'] = random_user_agent()

        sys.argv = ['yt-dlp', *args]
        try:
            # ps and pgrep show the run's own command line, as they would a fresh yt-dlp's
            import setproctitle

            setproctitle.setproctitle(' '.join(sys.argv))
        except ImportError:
            pass
        try:
            yt_dlp.main(args)
        except SystemExit as e:
            code = e.code
        if code is None:
            code = 0
        elif not isinstance(code, int):
            # as the interpreter does with sys.exit('message')
            print(code, file=sys.stderr)
            code = 1
        # what a normal end of the interpreter does: exit handlers, then waiting for its threads
        import atexit
        import threading

        atexit._run_exitfuncs()
        threading._shutdown()
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass
        os._exit(code & 0xFF if isinstance(code, int) else 1)


def main():
    path = sys.argv[1]
    warm()
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(128)
    sel = selectors.DefaultSelector()
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    # a SIGTERM (serve stopping) ends the runs in flight too, in the finally below
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    sel.register(srv, selectors.EVENT_READ, 'accept')
    sel.register(sys.stdin.fileno(), selectors.EVENT_READ, 'stdin')
    sel.register(wake_r, selectors.EVENT_READ, 'wake')
    streams = {}   # run id -> {role: socket}, until its control connection comes
    running = {}   # pid -> control socket
    controls = {}  # control socket -> pid
    print('ready', flush=True)
    retiring = False

    def reap():
        while running:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            control = running.pop(pid, None)
            if control is None:
                continue
            controls.pop(control, None)
            try:
                sel.unregister(control)
            except KeyError:
                pass  # its caller had closed it
            send(control, {'signal': os.WTERMSIG(status)} if os.WIFSIGNALED(status) else {'exit': os.WEXITSTATUS(status)})
            control.close()

    def start(conn, header):
        run = streams.pop(header.get('id'), {})
        out, err = run.get('stdout'), run.get('stderr')
        if out is None or err is None or not isinstance(header.get('args'), list):
            for s in run.values():
                s.close()
            send(conn, {'error': 'a run needs its stdout and stderr connections first, and its arguments'})
            conn.close()
            return
        sys.stdout.flush()
        sys.stderr.flush()
        # a cancel can reach the child at once: held until the child has its default SIGTERM (death),
        # never this process's handler, which in a child would run this loop's cleanup there
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        pid = os.fork()
        if pid == 0:
            try:
                keep_open = [srv, conn, out, err, *controls.keys(), *(s for r in streams.values() for s in r.values())]
                run_child([str(a) for a in header['args']], header.get('cwd') or os.getcwd(), out, err, keep_open)
            finally:
                os._exit(1)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        out.close()
        err.close()
        running[pid] = conn
        controls[conn] = pid
        sel.register(conn, selectors.EVENT_READ, 'control')
        send(conn, {'pid': pid})

    try:
        while True:
            for key, _ in sel.select(timeout=5):
                what = key.data
                if what == 'wake':
                    try:
                        while os.read(wake_r, 512):
                            pass
                    except BlockingIOError:
                        pass
                elif what == 'stdin':
                    if not os.read(sys.stdin.fileno(), 512):
                        # no new runs; the ones in flight end as they would have
                        retiring = True
                        sel.unregister(sys.stdin.fileno())
                        sel.unregister(srv)
                        srv.close()
                        try:
                            os.unlink(path)
                        except OSError:
                            pass
                elif what == 'accept':
                    if retiring:
                        continue
                    conn, _ = srv.accept()
                    try:
                        header = read_header(conn)
                    except (OSError, ValueError) as e:
                        send(conn, {'error': f'unreadable first line: {e}'})
                        conn.close()
                        continue
                    if header.get('role') in ('stdout', 'stderr'):
                        streams.setdefault(header.get('id'), {})[header['role']] = conn
                    elif header.get('role') == 'control':
                        start(conn, header)
                    else:
                        conn.close()
                elif what == 'control':
                    # the caller closed the run's control connection (or sent something): it stops
                    conn = key.fileobj
                    try:
                        data = conn.recv(512)
                    except OSError:
                        data = b''
                    if not data and conn in controls:
                        try:
                            os.kill(controls[conn], signal.SIGTERM)
                        except ProcessLookupError:
                            pass
                        sel.unregister(conn)
            reap()
            if retiring and not running:
                return
    finally:
        for pid in list(running):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for remove in (os.unlink, lambda p: os.rmdir(os.path.dirname(p))):
            try:
                remove(path)
            except OSError:
                pass


if __name__ == '__main__':
    main()
