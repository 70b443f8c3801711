"""The floor of one notification's way through the stack, hop by hop, from the services' JSON debug logs.

benchmark.sh's floor mode runs the services with LOG_LEVEL=debug LOG_FORMAT=json and sends notifications one at a
time at a low rate (loadgen http --batch 1); this reads, for each notification id, the moment each service logged
it done:

  ingest        "storage command confirmed by the broker"  the storage command is on storage.commands (the 202)
  storage       "storage command applied"                  committed in PostgreSQL and its change events confirmed
                                                           on fanout.changes
  fanout        "change fanned out"                        its push jobs confirmed on push.apns
  push-dispatch "push answered"                            the provider (the sandbox) answered the push

and prints, as Markdown, each hop's time (p50, mean, p90 in ms) over the notifications every service logged, with
the request's own time (the client's send to the 202) from loadgen's report. The logs' times are whole
milliseconds, so a hop's p50 is rounded; the means are not biased by it.

usage: floor_hops.py LOG-DIR LOADGEN-REPORT-DIR
"""

import json
import pathlib
import statistics
import sys
from datetime import datetime

MARKS = [
    ("ingest", "storage command confirmed by the broker"),
    ("storage", "storage command received"),
    ("storage", "storage command committed"),
    ("storage", "storage command applied"),
    ("fanout", "change received"),
    ("fanout", "change fanned out"),
    ("push-dispatch", "push received"),
    ("push-dispatch", "push answered"),
]

HOPS = [
    ("storage.commands → storage", "storage command confirmed by the broker", "storage command received",
     "from ingest's confirm to storage taking the message: the broker's delivery and the consumer's wake-up"),
    ("storage's transaction", "storage command received", "storage command committed",
     "decoding, and the PostgreSQL transaction (the statements and the commit)"),
    ("fanout.changes publish + confirm", "storage command committed", "storage command applied",
     "the change events published to the quorum queue fanout.changes and confirmed"),
    ("fanout.changes → fanout", "storage command applied", "change received",
     "from storage's confirm to fanout taking the message (the delivery can start before the confirm: then negative)"),
    ("fanout's work + push.apns publish + confirm", "change received", "change fanned out",
     "the user's devices (cached), the push jobs built, published to the quorum queue push.apns and confirmed"),
    ("push.apns → push-dispatch", "change fanned out", "push received",
     "from fanout's confirm to push-dispatch taking the message"),
    ("the provider's round trip", "push received", "push answered",
     "the HTTP/2 request to the sandbox (APNs) and its answer"),
]


def read_marks(log_dir):
    """{notification id: {message: first time (seconds)}} for the marks above."""
    marks = {}
    for service, message in MARKS:
        path = log_dir / f"{service}.log"
        if not path.exists():
            continue
        for line in path.open(encoding="utf-8", errors="replace"):
            if not line.startswith("{") or message not in line:
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if event.get("message") != message or "notificationId" not in event:
                continue
            if service == "fanout" and event.get("kind") not in (None, "created"):
                continue
            at = datetime.fromisoformat(event["time"].replace("Z", "+00:00")).timestamp()
            seen = marks.setdefault(event["notificationId"], {})
            seen.setdefault(message, at)
    return marks


def summary(values):
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return statistics.median(ordered), statistics.fmean(ordered), p90


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    log_dir, report_dir = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    marks = read_marks(log_dir)
    complete = [seen for seen in marks.values() if all(message in seen for _, message in MARKS)]
    if not complete:
        sys.exit(f"no notification was logged by all four services in {log_dir} (LOG_LEVEL=debug LOG_FORMAT=json?)")
    report = json.loads((report_dir / "report.json").read_text())
    request = report["publishLatencyMs"]
    end_to_end = report["endToEndLatencyMs"]
    print(f"{len(complete)} notifications logged by all four services; "
          f"{report['requestsPerSecond']:.0f} requests/s, one notification each\n")
    print("| hop | p50 ms | mean ms | p90 ms | what it holds |")
    print("|---|---|---|---|---|")
    print(f"| request → 202 (loadgen) | {request['p50']:.1f} | {request['mean']:.1f} | {request['p90']:.1f} | "
          "the HTTP request read and checked, the storage command published to storage.commands and confirmed |")
    for name, start, end, holds in HOPS:
        p50, mean, p90 = summary([1000 * (seen[end] - seen[start]) for seen in complete])
        print(f"| {name} | {p50:.1f} | {mean:.1f} | {p90:.1f} | {holds} |")
    p50, mean, p90 = summary([1000 * (seen[MARKS[-1][1]] - seen[MARKS[0][1]]) for seen in complete])
    print(f"| 202 → provider answered (logs) | {p50:.1f} | {mean:.1f} | {p90:.1f} | the three hops above |")
    print(f"| 202 → push at the sandbox (loadgen) | {end_to_end['p50']:.1f} | {end_to_end['mean']:.1f} | "
          f"{end_to_end['p90']:.1f} | createdDateTime to the sandbox's receivedAt |")


if __name__ == "__main__":
    main()
