package td

import (
	"fmt"
	"slices"
	"strings"
)

const (
	td10Context = "https://www.w3.org/2019/wot/td/v1"
	td11Context = "https://www.w3.org/2022/wot/td/v1.1"
)

// isTD10 tells whether the document is written against TD 1.0 only: its
// context names the 1.0 URL and not the 1.1 one (which 1.1 documents may add
// after the 1.0 URL).
func isTD10(doc map[string]any) bool {
	has10, has11 := false, false
	mark := func(v any) {
		switch v {
		case td10Context:
			has10 = true
		case td11Context:
			has11 = true
		}
	}
	switch c := doc["@context"].(type) {
	case string:
		mark(c)
	case []any:
		for _, e := range c {
			mark(e)
		}
	}
	return has10 && !has11
}

// thingModelTypes are the spellings of the Thing Model class: the compact
// term of the TD context and its expanded IRI.
var thingModelTypes = []string{"tm:ThingModel", "https://www.w3.org/2019/wot/td#ThingModel"}

const thingModelAdvice = "this document is a Thing Model (@type tm:ThingModel), not a Thing Description; register a TD instantiated from it"

// declaredThingModel reports a document whose @type says it is a Thing Model.
func declaredThingModel(doc map[string]any) (Problem, bool) {
	found := false
	switch t := doc["@type"].(type) {
	case string:
		found = slices.Contains(thingModelTypes, t)
	case []any:
		for _, e := range t {
			if s, ok := e.(string); ok && slices.Contains(thingModelTypes, s) {
				found = true
			}
		}
	}
	if !found {
		return Problem{}, false
	}
	return Problem{Field: "$['@type']", Description: thingModelAdvice}, true
}

// thingModelTraits recognizes a Thing Model that does not declare its type:
// TM-only members (tm:required, tm:optional, tm:ref), {{placeholders}}, a
// tm:extends link, or — as in the playground's absent_tm.json — a document in
// a TD context with neither @type nor anything that makes a description
// concrete (no forms anywhere, no security, no securityDefinitions). Callers
// use it only for documents that already failed the TD schema. When several
// traits are present the one at the smallest path is reported, for a stable
// answer.
func thingModelTraits(doc map[string]any) (Problem, bool) {
	var found []Problem
	var hasForms bool
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch c := v.(type) {
		case map[string]any:
			for k, e := range c {
				p := path + keyStep(k)
				switch k {
				case "tm:required", "tm:optional", "tm:ref":
					found = append(found, Problem{p, fmt.Sprintf("%q is a Thing Model term: this document is a Thing Model, not a Thing Description; register a TD instantiated from it", k)})
				case "forms":
					hasForms = true
				}
				if isPlaceholder(k) {
					found = append(found, Problem{p, fmt.Sprintf("member name %q is a Thing Model placeholder: this document is a Thing Model, not a Thing Description; register a TD instantiated from it, with every placeholder replaced", k)})
				}
				walk(e, p)
			}
		case []any:
			for i, e := range c {
				var b strings.Builder
				writeIndex(&b, i)
				walk(e, path+b.String())
			}
		case string:
			if isPlaceholder(c) {
				found = append(found, Problem{path, fmt.Sprintf("%q contains a Thing Model placeholder: this document is a Thing Model, not a Thing Description; register a TD instantiated from it, with every placeholder replaced", c)})
			}
		}
	}
	walk(doc, "$")

	if links, ok := doc["links"].([]any); ok {
		for i, l := range links {
			if m, ok := l.(map[string]any); ok && m["rel"] == "tm:extends" {
				found = append(found, Problem{fmt.Sprintf("$.links[%d].rel", i), `a "tm:extends" link belongs in a Thing Model: this document is a Thing Model, not a Thing Description; register a TD instantiated from it`})
			}
		}
	}

	// The weakest trait counts only when no TM term or placeholder was found,
	// so the answer points at the most telling member.
	_, hasType := doc["@type"]
	_, hasSecurity := doc["security"]
	_, hasDefs := doc["securityDefinitions"]
	if len(found) == 0 && !hasType && !hasForms && !hasSecurity && !hasDefs && hasTDContext(doc) {
		found = append(found, Problem{"$['@type']", `this document has no "@type" and none of the members that make a Thing Description concrete (forms, "security", "securityDefinitions"): it reads as a Thing Model without "@type": "tm:ThingModel"; register a TD instantiated from it, with forms and security`})
	}

	if len(found) == 0 {
		return Problem{}, false
	}
	return slices.MinFunc(found, func(a, b Problem) int {
		if c := strings.Compare(a.Field, b.Field); c != 0 {
			return c
		}
		return strings.Compare(a.Description, b.Description)
	}), true
}

func hasTDContext(doc map[string]any) bool {
	switch c := doc["@context"].(type) {
	case string:
		return c == td10Context || c == td11Context
	case []any:
		return slices.Contains(c, any(td10Context)) || slices.Contains(c, any(td11Context))
	}
	return false
}

// isPlaceholder matches the TM placeholder syntax {{NAME}}: two braces, a
// name without braces, two braces.
func isPlaceholder(s string) bool {
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			return false
		}
		s = s[i+2:]
		j := strings.IndexAny(s, "{}")
		if j > 0 && strings.HasPrefix(s[j:], "}}") {
			return true
		}
		if j < 0 {
			return false
		}
	}
}

// checkSecurityNames reports security scheme names that are used but not
// defined in securityDefinitions: at the top level, in every form, and in
// combo schemes. The schema only checks that they are strings. When
// securityDefinitions is absent or not an object the schema already says so,
// and listing every name as undefined would bury that one fix.
func checkSecurityNames(doc map[string]any) []Problem {
	defs, ok := doc["securityDefinitions"].(map[string]any)
	if !ok {
		return nil
	}
	var out []Problem
	undefined := func(name, field string) {
		out = append(out, Problem{field, undefinedSchemeAdvice(name, defs)})
	}
	check := func(v any, field string) {
		switch s := v.(type) {
		case string:
			if _, ok := defs[s]; !ok {
				undefined(s, field)
			}
		case []any:
			for i, e := range s {
				if name, ok := e.(string); ok {
					if _, ok := defs[name]; !ok {
						undefined(name, fmt.Sprintf("%s[%d]", field, i))
					}
				}
			}
		}
	}
	checkForms := func(v any, field string) {
		forms, _ := v.([]any)
		for i, f := range forms {
			if form, ok := f.(map[string]any); ok {
				if sec, ok := form["security"]; ok {
					check(sec, fmt.Sprintf("%s[%d].security", field, i))
				}
			}
		}
	}

	if sec, ok := doc["security"]; ok {
		check(sec, "$.security")
	}
	checkForms(doc["forms"], "$.forms")
	for _, kind := range []string{"properties", "actions", "events"} {
		affordances, _ := doc[kind].(map[string]any)
		for name, a := range affordances {
			if m, ok := a.(map[string]any); ok {
				checkForms(m["forms"], "$"+keyStep(kind)+keyStep(name)+".forms")
			}
		}
	}
	for name, d := range defs {
		scheme, _ := d.(map[string]any)
		if scheme["scheme"] != "combo" {
			continue
		}
		for _, kw := range []string{"oneOf", "allOf"} {
			if list, ok := scheme[kw].([]any); ok {
				check(list, "$.securityDefinitions"+keyStep(name)+keyStep(kw))
			}
		}
	}
	return out
}

func undefinedSchemeAdvice(name string, defs map[string]any) string {
	msg := fmt.Sprintf("security scheme %q is not defined in \"securityDefinitions\"; define it there", name)
	if len(defs) == 0 {
		return msg
	}
	return msg + " or use one of " + quoteList(sortedKeys(defs), "or")
}

// checkTypeLinks enforces that at most one link has rel "type": that link
// names the Thing Model the TD was instantiated from, and a TD has only one.
func checkTypeLinks(doc map[string]any) []Problem {
	links, _ := doc["links"].([]any)
	first := -1
	var out []Problem
	for i, l := range links {
		if m, ok := l.(map[string]any); !ok || m["rel"] != "type" {
			continue
		}
		if first < 0 {
			first = i
			continue
		}
		out = append(out, Problem{
			Field:       fmt.Sprintf("$.links[%d].rel", i),
			Description: fmt.Sprintf(`only one link may have "rel": "type" (the Thing Model this TD is an instance of), and links[%d] already has it; remove this link or change its "rel"`, first),
		})
	}
	return out
}

// securityNames returns the scheme names a "security" value uses.
func securityNames(v any) []string {
	switch s := v.(type) {
	case string:
		return []string{s}
	case []any:
		var names []string
		for _, e := range s {
			if name, ok := e.(string); ok {
				names = append(names, name)
			}
		}
		return names
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
