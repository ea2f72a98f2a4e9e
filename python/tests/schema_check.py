"""A JSON Schema check of the subset the T4 schema uses (type, properties,
required, enum, items, pattern), or jsonschema itself where installed."""
import re


def _type_ok(x, t):
    if isinstance(t, list):
        return any(_type_ok(x, u) for u in t)
    return {"object": isinstance(x, dict), "array": isinstance(x, list), "string": isinstance(x, str),
            "number": isinstance(x, (int, float)) and not isinstance(x, bool),
            "integer": isinstance(x, int) and not isinstance(x, bool), "boolean": isinstance(x, bool),
            "null": x is None}[t]


def errors(x, s, path="$"):
    out = []
    if "type" in s and not _type_ok(x, s["type"]):
        return ["%s: %r is not of type %s" % (path, x, s["type"])]
    if "enum" in s and x not in s["enum"]:
        out.append("%s: %r is not one of %s" % (path, x, s["enum"]))
    if "pattern" in s and isinstance(x, str) and not re.search(s["pattern"], x):
        out.append("%s: %r does not match %s" % (path, x, s["pattern"]))
    if isinstance(x, dict):
        for k in s.get("required", []):
            if k not in x:
                out.append("%s: %r is required" % (path, k))
        for k, sub in s.get("properties", {}).items():
            if k in x:
                out += errors(x[k], sub, "%s.%s" % (path, k))
    if isinstance(x, list) and "items" in s:
        for i, y in enumerate(x):
            out += errors(y, s["items"], "%s[%d]" % (path, i))
    return out


def validate(doc, schema):
    """[] when doc is valid, else the reasons."""
    try:
        import jsonschema
    except ImportError:
        return errors(doc, schema)
    v = jsonschema.Draft202012Validator(schema) if hasattr(jsonschema, "Draft202012Validator") else None
    if v is None:
        return errors(doc, schema)
    return [e.message for e in v.iter_errors(doc)]
