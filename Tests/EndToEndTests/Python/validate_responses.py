"""Validates ingest's answers to the end-to-end tests against its OpenAPI description (Services/ingest/openapi.yaml).

Reads the JSON lines ResponseRecord.swift appends to RESPONSES-DIR/<pid>.jsonl ({"method", "path", "query", "status",
"contentType", "body" | "bodyBase64"}). Each answer needs its operation (the path matched against the description's
templates, literal segments before {parameters}) and its status there (exact, then 4XX, then default); a JSON body must
match that response's application/json schema (JSON Schema 2020-12, formats asserted). Other bodies (the event stream,
the description itself, metrics) are checked for operation and status only. Identical failures are printed once, with
their count. Exits 1 on any failure, or when nothing was recorded.

usage: validate_responses.py RESPONSES-DIR [--description OPENAPI-YAML]
"""

import argparse
import base64
import json
import pathlib
import re
import sys

import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

REPOSITORY = pathlib.Path(__file__).resolve().parents[3]


class Description:
    """The description's operations, and the schemas of their answers."""

    def __init__(self, document):
        self.document = document
        # Each template's segments and its operations by method; a "{...}" segment matches any one segment.
        self.templates = [(template, template.strip("/").split("/"), item)
                          for template, item in document["paths"].items()]
        # The whole document is the root resource, so the schemas' #/components/... references resolve in it.
        self.root = Draft202012Validator(document, format_checker=Draft202012Validator.FORMAT_CHECKER)
        self.validators = {}

    def operation(self, method, path):
        """The (template, operation) for method and path, or None; of two matching templates the one whose first
        differing segment is literal wins (/v1/me/notifications/changes over /v1/me/notifications/{id})."""
        segments = path.strip("/").split("/")
        matches = []
        for template, template_segments, item in self.templates:
            if method.lower() not in item or len(template_segments) != len(segments):
                continue
            literal = tuple(not part.startswith("{") for part in template_segments)
            pairs = zip(literal, template_segments, segments)
            if all(not is_literal or part == segment for is_literal, part, segment in pairs):
                matches.append((literal, template, item[method.lower()]))
        if not matches:
            return None
        _, template, operation = max(matches, key=lambda match: match[0])
        return template, operation

    def response(self, operation, status):
        """The response object for status (exact, then e.g. 4XX, then default), its $ref resolved; or None."""
        responses = operation.get("responses", {})
        keys = {str(key).upper(): value for key, value in responses.items()}
        response = keys.get(str(status)) or keys.get(f"{status // 100}XX") or keys.get("DEFAULT")
        while response is not None and "$ref" in response:
            response = self.resolve(response["$ref"])
        return response

    def resolve(self, reference):
        """The object at a local reference such as #/components/responses/Error."""
        target = self.document
        for part in reference.removeprefix("#/").split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        return target

    def validator(self, schema):
        """A validator of schema whose references resolve in the whole description (one per schema)."""
        key = id(schema)
        if key not in self.validators:
            self.validators[key] = self.root.evolve(schema=schema)
        return self.validators[key]


def answers(directory):
    """Every recorded answer, file by file, line by line."""
    for file in sorted(pathlib.Path(directory).glob("*.jsonl")):
        with file.open(encoding="utf-8") as lines:
            for line in lines:
                if line.strip():
                    yield json.loads(line)


def body_text(answer):
    if "body" in answer:
        return answer["body"]
    return base64.b64decode(answer.get("bodyBase64", "")).decode("utf-8", errors="replace")


def is_json(content_type):
    media_type = (content_type or "").split(";")[0].strip().lower()
    return media_type == "application/json" or media_type.endswith("+json")


def trimmed(text, limit=300):
    return text if len(text) <= limit else text[:limit] + "..."


def check(description, answer):
    """The answer's operation template and its failure: (kind, detail), or None when it conforms."""
    method, path, status = answer["method"], answer["path"], answer["status"]
    found = description.operation(method, path)
    if found is None:
        return None, ("no operation", "the description has no operation for this method and path")
    template, operation = found
    response = description.response(operation, status)
    if response is None:
        name = operation.get("operationId", template)
        return template, ("no status", f"{name} has no {status} answer in the description")
    text = body_text(answer)
    if not is_json(answer.get("contentType")) or not text:
        return template, None
    schema = response.get("content", {}).get("application/json", {}).get("schema")
    if schema is None:
        return template, ("no JSON body", "the description gives this answer no application/json body, but it has one")
    try:
        body = json.loads(text)
    except ValueError as error:
        return template, ("not JSON", f"the body is not JSON: {error}")
    error = best_match(description.validator(schema).iter_errors(body))
    if error is None:
        return template, None
    # Grouped by where in the body and which keyword failed; array indices do not make failures different.
    where = re.sub(r"\[\d+\]", "[*]", error.json_path)
    return template, (f"{where} {error.validator}", f"{error.json_path}: {trimmed(error.message)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("responses", help="the directory of the recorded answers ($NOTIFY_STATE_DIR/responses)")
    parser.add_argument("--description", default=REPOSITORY / "Services/ingest/openapi.yaml",
                        help="ingest's OpenAPI description")
    arguments = parser.parse_args()
    with open(arguments.description, encoding="utf-8") as file:
        description = Description(yaml.safe_load(file))

    count, operations = 0, set()
    # (method, template or path, status, kind) -> [count, detail, first answer]
    failures = {}
    for answer in answers(arguments.responses):
        count += 1
        template, failure = check(description, answer)
        if template is not None:
            operations.add((answer["method"], template))
        if failure is not None:
            kind, detail = failure
            key = (answer["method"], template or answer["path"], answer["status"], kind)
            failures.setdefault(key, [0, detail, answer])[0] += 1

    for (method, template, status, _), (times, detail, answer) in failures.items():
        query = f"?{answer['query']}" if answer.get("query") else ""
        print(f"FAIL {method} {template} {status} ({times} answer{'s' if times > 1 else ''}): {detail}")
        print(f"     first: {method} {answer['path']}{query}")
        print(f"     body: {trimmed(body_text(answer))}")
    failed = sum(times for times, _, _ in failures.values())
    print(f"{count} answers of {len(operations)} operations validated, {failed} failures"
          + (f" ({len(failures)} distinct)" if failures else ""))
    if count == 0:
        print(f"no answer recorded in {arguments.responses}", file=sys.stderr)
    return 1 if failed or count == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
