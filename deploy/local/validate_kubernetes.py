"""Validates rendered Kubernetes manifests (kubectl kustomize's output) for check-kubernetes.sh.

    validate_kubernetes.py --kubernetes-version 1.34.0 --crds DIR FILE...

Each resource is checked one of two ways:
- a built-in kind with kubernetes-validate in strict mode (an unknown field is an error), against the Kubernetes
  version given;
- a custom resource against the openAPIV3Schema of its CustomResourceDefinition in DIR (the operators' published CRD
  YAML), made strict the way the API server prunes: an object with no x-kubernetes-preserve-unknown-fields refuses a
  field its schema does not name. x-kubernetes-int-or-string and nullable become their JSON Schema equivalents; the
  metadata is checked as a built-in ObjectMeta. CEL rules (x-kubernetes-validations) are not evaluated: their count
  is printed.
A kind that is neither built in nor in DIR is an error, and so is a reference to a Secret or ConfigMap (or one of its
keys) that the same rendering does not hold, or a Service, PodDisruptionBudget or HorizontalPodAutoscaler that
selects or targets no workload of it.

Prints one line per error and a summary per file; exits 1 when anything failed.
"""

import argparse
import sys
from collections import Counter
from pathlib import Path

import jsonschema
import kubernetes_validate
import yaml
from kubernetes_validate.utils import SchemaNotFoundError


def strict_schema(node, cel_rules):
    """The CRD schema `node` as JSON Schema (Draft 4, whose exclusiveMinimum is OpenAPI 3.0's), refusing unknown fields."""
    if isinstance(node, list):
        return [strict_schema(item, cel_rules) for item in node]
    if not isinstance(node, dict):
        return node
    cel_rules[0] += len(node.get("x-kubernetes-validations", []))
    schema = {key: strict_schema(value, cel_rules) for key, value in node.items() if not key.startswith("x-kubernetes-")}
    if node.get("x-kubernetes-int-or-string"):
        schema.pop("type", None)
        schema["anyOf"] = [{"type": "integer"}, {"type": "string"}] + schema.get("anyOf", [])
    if node.get("nullable") and isinstance(schema.get("type"), str):
        schema["type"] = [schema["type"], "null"]
    schema.pop("nullable", None)
    if node.get("x-kubernetes-embedded-resource"):
        properties = schema.setdefault("properties", {})
        for field in ("apiVersion", "kind"):
            properties.setdefault(field, {"type": "string"})
        properties.setdefault("metadata", {"type": "object"})
    is_object = node.get("type") == "object" or "properties" in node
    if is_object and not node.get("x-kubernetes-preserve-unknown-fields") and "additionalProperties" not in node:
        schema["additionalProperties"] = False
    return schema


def load_crds(directory):
    """(apiVersion, kind) -> (validator, CEL rules skipped, CRD file name) for every served version of every CRD."""
    crds = {}
    for path in sorted(Path(directory).glob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            if not document or document.get("kind") != "CustomResourceDefinition":
                continue
            spec = document["spec"]
            for version in spec["versions"]:
                if not version.get("served", True):
                    continue
                cel_rules = [0]
                schema = strict_schema(version["schema"]["openAPIV3Schema"], cel_rules)
                # The API server checks metadata as ObjectMeta (done below), whatever the CRD says of it.
                schema.setdefault("properties", {})["metadata"] = {"type": "object"}
                jsonschema.Draft4Validator.check_schema(schema)
                key = (f"{spec['group']}/{version['name']}", spec["names"]["kind"])
                crds[key] = (jsonschema.Draft4Validator(schema), cel_rules[0], path.name)
    return crds


def name_of(resource):
    return f"{resource.get('kind')}/{resource.get('metadata', {}).get('name')}"


def validate_builtin(resource, version):
    """Errors of a built-in resource (empty when valid); None when kubernetes-validate has no schema for its kind."""
    try:
        kubernetes_validate.validate(resource, version, strict=True)
    except SchemaNotFoundError:
        return None
    except jsonschema.ValidationError as error:
        path = ".".join(str(item) for item in error.path) or "(root)"
        return [f"{path}: {error.message}"]
    return []


def validate_custom(resource, validator, version):
    errors = []
    for error in sorted(validator.iter_errors(resource), key=lambda e: list(map(str, e.path))):
        path = ".".join(str(item) for item in error.path) or "(root)"
        errors.append(f"{path}: {error.message}")
    # metadata as the API server sees it: a ConfigMap's ObjectMeta, strict.
    holder = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": resource.get("metadata", {})}
    errors += [f"metadata: {error}" for error in validate_builtin(holder, version) or []]
    return errors


def pod_templates(resource):
    spec = resource.get("spec", {})
    if resource.get("kind") in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"):
        return [spec.get("template", {})]
    if resource.get("kind") == "RabbitmqCluster":
        return [spec.get("override", {}).get("statefulSet", {}).get("spec", {}).get("template", {})]
    return []


def walk(node, path=()):
    """Every (path, dict) under node."""
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            yield from walk(value, path + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from walk(value, path + (index,))


def check_references(resources):
    """Errors of references within one rendering: Secrets, ConfigMaps and their keys; selectors; HPA targets."""
    held = {}
    for resource in resources:
        if resource.get("kind") in ("Secret", "ConfigMap"):
            keys = set(resource.get("data", {}) or {}) | set(resource.get("stringData", {}) or {})
            keys |= set(resource.get("binaryData", {}) or {})
            held[(resource["kind"], resource["metadata"]["name"])] = keys
    errors, count = [], 0

    def need(owner, kind, name, key=None):
        nonlocal count
        count += 1
        if (kind, name) not in held:
            errors.append(f"{name_of(owner)}: refers to {kind} {name}, which this rendering does not hold")
        elif key is not None and key not in held[(kind, name)]:
            errors.append(f"{name_of(owner)}: refers to key {key} of {kind} {name}, which it does not hold")

    for resource in resources:
        for path, node in walk(resource.get("spec", {})):
            if "secretKeyRef" in node:
                need(resource, "Secret", node["secretKeyRef"]["name"], node["secretKeyRef"].get("key"))
            if "configMapKeyRef" in node:
                need(resource, "ConfigMap", node["configMapKeyRef"]["name"], node["configMapKeyRef"].get("key"))
            if isinstance(node.get("secret"), dict) and "secretName" in node["secret"]:
                need(resource, "Secret", node["secret"]["secretName"])
            if path[-1:] == ("secretRef",) or path[-1:] == ("configMapRef",):
                need(resource, "Secret" if path[-1] == "secretRef" else "ConfigMap", node["name"])
        if resource.get("kind") == "Cluster":  # CloudNativePG
            spec = resource.get("spec", {})
            initdb = spec.get("bootstrap", {}).get("initdb", {})
            if "secret" in initdb:
                need(resource, "Secret", initdb["secret"]["name"], "password")
            for kind, refs in (("Secret", "secretRefs"), ("ConfigMap", "configMapRefs")):
                for ref in initdb.get("postInitApplicationSQLRefs", {}).get(refs, []):
                    need(resource, kind, ref["name"], ref["key"])
            for role in spec.get("managed", {}).get("roles", []):
                if "passwordSecret" in role:
                    need(resource, "Secret", role["passwordSecret"]["name"], "password")

    workloads = {(r.get("kind"), r["metadata"]["name"]): r for r in resources if pod_templates(r)}
    template_labels = [t.get("metadata", {}).get("labels", {}) for r in workloads.values() for t in pod_templates(r)]
    # The RabbitMQ Cluster Operator labels its pods so (internal/metadata/label.go).
    template_labels += [{"app.kubernetes.io/name": r["metadata"]["name"], "app.kubernetes.io/component": "rabbitmq",
                         "app.kubernetes.io/part-of": "rabbitmq"} for r in resources if r.get("kind") == "RabbitmqCluster"]
    for resource in resources:
        kind, spec = resource.get("kind"), resource.get("spec", {})
        selector = None
        if kind == "Service" and spec.get("selector"):
            selector = spec["selector"]
        elif kind == "PodDisruptionBudget":
            selector = spec.get("selector", {}).get("matchLabels", {})
        if selector is not None:
            count += 1
            if not any(selector.items() <= labels.items() for labels in template_labels):
                errors.append(f"{name_of(resource)}: its selector {selector} matches no pod template")
        if kind == "HorizontalPodAutoscaler":
            count += 1
            target = spec.get("scaleTargetRef", {})
            if (target.get("kind"), target.get("name")) not in workloads:
                errors.append(f"{name_of(resource)}: targets {target.get('kind')}/{target.get('name')}, not in this rendering")
            elif "replicas" in workloads[(target["kind"], target["name"])].get("spec", {}):
                errors.append(f"{name_of(resource)}: its target sets spec.replicas, which every apply would reset")
    return errors, count


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kubernetes-version", required=True)
    parser.add_argument("--crds", required=True, help="directory of CustomResourceDefinition YAML files")
    parser.add_argument("files", nargs="+", help="rendered manifests (multi-document YAML)")
    arguments = parser.parse_args()

    crds = load_crds(arguments.crds)
    failed = False
    for file in arguments.files:
        resources = [document for document in yaml.safe_load_all(Path(file).read_text()) if document]
        builtin, custom, cel_skipped, errors = Counter(), Counter(), 0, []
        for resource in resources:
            key = (resource.get("apiVersion"), resource.get("kind"))
            if key in crds:
                validator, cel_rules, _ = crds[key]
                problems = validate_custom(resource, validator, arguments.kubernetes_version)
                custom[resource["kind"]] += 1
                cel_skipped += cel_rules
            else:
                problems = validate_builtin(resource, arguments.kubernetes_version)
                if problems is None:
                    problems = [f"no schema for {key[1]} ({key[0]}) in Kubernetes {arguments.kubernetes_version} or among the CRDs"]
                builtin[resource.get("kind")] += 1
            errors += [f"{name_of(resource)}: {problem}" for problem in problems]
        reference_errors, references = check_references(resources)
        errors += reference_errors
        for error in errors:
            print(f"ERROR {file}: {error}")
        def listing(counter):
            return ", ".join(f"{count} {kind}" for kind, count in sorted(counter.items())) or "none"
        print(f"{file}: {len(resources)} resources; built-in against Kubernetes {arguments.kubernetes_version} (strict): "
              f"{sum(builtin.values())} ({listing(builtin)}); custom against their CRDs (strict): {sum(custom.values())} "
              f"({listing(custom)}; {cel_skipped} CEL rules not evaluated); {references} references; "
              f"{'FAILED, ' + str(len(errors)) + ' errors' if errors else 'valid'}")
        failed |= bool(errors)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
