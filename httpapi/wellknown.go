package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v5"
)

const (
	tdContext        = "https://www.w3.org/2022/wot/td/v1.1"
	directoryContext = "https://www.w3.org/2022/wot/discovery"
)

// directoryTDTemplate is the directory's own TD (WoT Discovery's Thing Model of a
// directory, instantiated): only the operations lmosdir implements, and every response
// that has a body names its content type, which the TD schema requires.
const directoryTDTemplate = `{
  "@context": ["` + tdContext + `", "` + directoryContext + `"],
  "@type": "ThingDirectory",
  "title": "lmosdir",
  "description": "Directory of AI agents and tools (Eclipse LMOS) and other Things, with the W3C WoT Discovery API",
  "version": {"instance": {{VERSION}}},
  "base": {{BASE}},
  "securityDefinitions": {"nosec_sc": {"scheme": "nosec"}},
  "security": "nosec_sc",
  "properties": {
    "things": {
      "description": "Retrieve all Thing Descriptions, optionally a page at a time",
      "type": "array",
      "readOnly": true,
      "uriVariables": {
        "offset": {"title": "Number of TDs to skip before the page", "type": "integer", "minimum": 0, "default": 0},
        "limit": {"title": "Number of TDs in a page", "type": "integer", "minimum": 1},
        "format": {"title": "Payload format", "type": "string", "enum": ["array", "collection"], "default": "array"}
      },
      "forms": [{
        "op": "readproperty",
        "href": "things{?offset,limit,format}",
        "htv:methodName": "GET",
        "contentType": "application/ld+json",
        "response": {"description": "Success response", "htv:statusCodeValue": 200, "contentType": "application/ld+json"},
        "additionalResponses": [{"description": "Invalid query arguments", "contentType": "application/problem+json", "htv:statusCodeValue": 400}]
      }]
    },
    "directories": {
      "description": "Other directories announced on the local network over mDNS, as Thing Links to their TDs",
      "type": "array",
      "readOnly": true,
      "forms": [{
        "op": "readproperty",
        "href": "directories",
        "htv:methodName": "GET",
        "contentType": "application/ld+json",
        "response": {"description": "Success response", "htv:statusCodeValue": 200, "contentType": "application/ld+json"}
      }]
    }
  },
  "actions": {
    "createThing": {
      "description": "Create or replace a Thing Description",
      "uriVariables": {"id": {"@type": "ThingID", "title": "Thing Description ID", "type": "string", "format": "iri-reference"}},
      "input": {"description": "The schema is implied by the content type", "type": "object"},
      "forms": [{
        "href": "things/{id}",
        "htv:methodName": "PUT",
        "contentType": "application/td+json",
        "additionalResponses": [{"description": "Invalid serialization or TD", "contentType": "application/problem+json", "htv:statusCodeValue": 400}]
      }]
    },
    "createAnonymousThing": {
      "description": "Create an anonymous Thing Description; the Location header carries the id the directory gave it",
      "input": {"description": "The schema is implied by the content type", "type": "object"},
      "forms": [{
        "href": "things",
        "htv:methodName": "POST",
        "contentType": "application/td+json",
        "additionalResponses": [{"description": "Invalid serialization or TD", "contentType": "application/problem+json", "htv:statusCodeValue": 400}]
      }]
    },
    "retrieveThing": {
      "description": "Retrieve a Thing Description",
      "uriVariables": {"id": {"@type": "ThingID", "title": "Thing Description ID", "type": "string", "format": "iri-reference"}},
      "output": {"description": "The schema is implied by the content type", "type": "object"},
      "safe": true,
      "idempotent": true,
      "forms": [{
        "href": "things/{id}",
        "htv:methodName": "GET",
        "response": {"description": "Success response", "htv:statusCodeValue": 200, "contentType": "application/td+json"},
        "additionalResponses": [{"description": "TD with the given id not found", "contentType": "application/problem+json", "htv:statusCodeValue": 404}]
      }]
    },
    "updateThing": {
      "description": "Replace a Thing Description",
      "uriVariables": {"id": {"@type": "ThingID", "title": "Thing Description ID", "type": "string", "format": "iri-reference"}},
      "input": {"description": "The schema is implied by the content type", "type": "object"},
      "forms": [{
        "href": "things/{id}",
        "htv:methodName": "PUT",
        "contentType": "application/td+json",
        "additionalResponses": [{"description": "Invalid serialization or TD", "contentType": "application/problem+json", "htv:statusCodeValue": 400}]
      }]
    },
    "partiallyUpdateThing": {
      "description": "Partially update a Thing Description with a JSON merge patch; an empty patch renews the registration",
      "uriVariables": {"id": {"@type": "ThingID", "title": "Thing Description ID", "type": "string", "format": "iri-reference"}},
      "input": {"description": "The schema is implied by the content type", "type": "object"},
      "forms": [{
        "href": "things/{id}",
        "htv:methodName": "PATCH",
        "contentType": "application/merge-patch+json",
        "additionalResponses": [
          {"description": "Invalid serialization or TD", "contentType": "application/problem+json", "htv:statusCodeValue": 400},
          {"description": "TD with the given id not found", "contentType": "application/problem+json", "htv:statusCodeValue": 404}
        ]
      }]
    },
    "deleteThing": {
      "description": "Delete a Thing Description",
      "uriVariables": {"id": {"@type": "ThingID", "title": "Thing Description ID", "type": "string", "format": "iri-reference"}},
      "forms": [{
        "href": "things/{id}",
        "htv:methodName": "DELETE",
        "additionalResponses": [{"description": "TD with the given id not found", "contentType": "application/problem+json", "htv:statusCodeValue": 404}]
      }]
    },
    "searchJSONPath": {
      "description": "JSONPath (RFC 9535) search over the array of all TDs",
      "uriVariables": {"query": {"title": "A valid JSONPath expression", "type": "string"}},
      "output": {"description": "The schema depends on the given query", "type": "array"},
      "safe": true,
      "idempotent": true,
      "forms": [{
        "href": "search/jsonpath{?query}",
        "htv:methodName": "GET",
        "response": {"description": "Success response", "contentType": "application/json", "htv:statusCodeValue": 200},
        "additionalResponses": [
          {"description": "JSONPath expression not provided or contains syntax errors", "contentType": "application/problem+json", "htv:statusCodeValue": 400},
          {"description": "The query exceeds the directory's limits", "contentType": "application/problem+json", "htv:statusCodeValue": 422}
        ]
      }]
    },
    "search": {
      "description": "Full-text and filtered search of agents, tools and other Things, ranked, with facets and cursor pages (lmosdir's own search; see /openapi.yaml)",
      "uriVariables": {
        "q": {"title": "Words that must occur", "type": "string"},
        "kind": {"title": "What the Thing is", "type": "string", "enum": ["agent", "tool", "directory", "link", "thing"]},
        "type": {"title": "An @type, compact or expanded", "type": "string"},
        "vendor": {"title": "Vendor name or URL", "type": "string"},
        "action": {"title": "Action name", "type": "string"},
        "property": {"title": "Property name", "type": "string"},
        "event": {"title": "Event name", "type": "string"},
        "capability": {"title": "LMOS capability id", "type": "string"},
        "protocol": {"title": "URI scheme or subprotocol of a form", "type": "string"},
        "limit": {"title": "Items per page", "type": "integer", "minimum": 1, "maximum": 100},
        "cursor": {"title": "Where the page starts, from the previous page's next link", "type": "string"}
      },
      "output": {
        "type": "object",
        "properties": {
          "items": {"type": "array", "items": {"type": "object"}},
          "facets": {"type": "object"},
          "next": {"oneOf": [{"type": "string"}, {"type": "null"}]}
        }
      },
      "safe": true,
      "idempotent": true,
      "forms": [{
        "href": "search{?q,kind,type,vendor,action,property,event,capability,protocol,limit,cursor}",
        "htv:methodName": "GET",
        "response": {"description": "Success response", "contentType": "application/json", "htv:statusCodeValue": 200},
        "additionalResponses": [
          {"description": "Unknown or invalid parameters", "contentType": "application/problem+json", "htv:statusCodeValue": 400},
          {"description": "The query exceeds the directory's limits", "contentType": "application/problem+json", "htv:statusCodeValue": 422}
        ]
      }]
    },
    "sendMessage": {
      "description": "Relay one Eclipse LMOS protocol message to a registered agent or tool through the directory's LMOS gateway, which checks it against the Thing's TD first; the answer is the Thing's reply, or an LMOS error message (see /openapi.yaml). Over HTTP the message is for the Thing {id}; over the WebSocket form each frame is one message for the registered Thing its thingId names",
      "uriVariables": {
        "id": {"@type": "ThingID", "title": "Id of the Thing the message is for", "type": "string", "format": "iri-reference"},
        "consumer": {"title": "The consumer's own id, its Thing id when it is registered", "type": "string"},
        "session": {"title": "The session the AOS guardian is told of", "type": "string"}
      },
      "input": {"description": "One LMOS message: thingId, messageId (a version 4 UUID), messageType and the members of that type", "type": "object", "required": ["messageType"]},
      "output": {"description": "One LMOS message; subscriptions and observations get a text/event-stream of them", "type": "object"},
      "forms": [
        {
          "href": "things/{id}/messages{?consumer,session}",
          "htv:methodName": "POST",
          "contentType": "application/json",
          "response": {"description": "The reply, or the LMOS error message that refuses the request", "contentType": "application/json", "htv:statusCodeValue": 200},
          "additionalResponses": [
            {"description": "Replies as they come: events, property readings, or action statuses when asked for with Accept: text/event-stream", "success": true, "contentType": "text/event-stream", "htv:statusCodeValue": 200},
            {"description": "The body is not one JSON object, names another Thing than the path, or the query has unknown parameters", "contentType": "application/problem+json", "htv:statusCodeValue": 400},
            {"description": "The body is larger than the directory's limit", "contentType": "application/problem+json", "htv:statusCodeValue": 413},
            {"description": "The Content-Type is not application/json", "contentType": "application/problem+json", "htv:statusCodeValue": 415},
            {"description": "The gateway is not running", "contentType": "application/problem+json", "htv:statusCodeValue": 503}
          ]
        },
        {
          "href": {{LMOS}},
          "subprotocol": "lmosprotocol",
          "contentType": "application/json"
        }
      ]
    }
  },
  "events": {
    "thingCreated": {
      "description": "Registration of a Thing Description",
      "uriVariables": {
        "diff": {"description": "Receive the full created TD as event data", "type": "boolean"},
        "kind": {"description": "Only Things of this kind", "type": "string", "enum": ["agent", "tool", "directory", "link", "thing"]},
        "vendor": {"description": "Only Things of this vendor (name, any case, or URL)", "type": "string"}
      },
      "data": {"title": "The id, or with diff the whole Enriched TD", "type": "object"},
      "forms": [{
        "op": "subscribeevent",
        "href": "events/thing_created{?diff,kind,vendor}",
        "subprotocol": "sse",
        "htv:headers": [{"description": "ID of the last event received, to resume after it", "htv:fieldName": "Last-Event-ID"}],
        "contentType": "text/event-stream",
        "response": {"contentType": "text/event-stream"},
        "additionalResponses": [
          {"description": "Invalid query arguments or Last-Event-ID", "contentType": "application/problem+json", "htv:statusCodeValue": 400},
          {"description": "The events after Last-Event-ID are no longer held", "contentType": "application/problem+json", "htv:statusCodeValue": 410}
        ]
      }]
    },
    "thingUpdated": {
      "description": "Update of a Thing Description",
      "uriVariables": {
        "diff": {"description": "Receive the changes as an RFC 7396 merge patch", "type": "boolean"},
        "kind": {"description": "Only Things of this kind", "type": "string", "enum": ["agent", "tool", "directory", "link", "thing"]},
        "vendor": {"description": "Only Things of this vendor (name, any case, or URL)", "type": "string"}
      },
      "data": {"title": "The id, or with diff a merge patch with the id", "type": "object", "contentMediaType": "application/merge-patch+json"},
      "forms": [{
        "op": "subscribeevent",
        "href": "events/thing_updated{?diff,kind,vendor}",
        "subprotocol": "sse",
        "htv:headers": [{"description": "ID of the last event received, to resume after it", "htv:fieldName": "Last-Event-ID"}],
        "contentType": "text/event-stream",
        "response": {"contentType": "text/event-stream"},
        "additionalResponses": [
          {"description": "Invalid query arguments or Last-Event-ID", "contentType": "application/problem+json", "htv:statusCodeValue": 400},
          {"description": "The events after Last-Event-ID are no longer held", "contentType": "application/problem+json", "htv:statusCodeValue": 410}
        ]
      }]
    },
    "thingDeleted": {
      "description": "Deletion or expiry of a Thing Description",
      "uriVariables": {
        "kind": {"description": "Only Things of this kind", "type": "string", "enum": ["agent", "tool", "directory", "link", "thing"]},
        "vendor": {"description": "Only Things of this vendor (name, any case, or URL)", "type": "string"}
      },
      "data": {"title": "The id", "type": "object"},
      "forms": [{
        "op": "subscribeevent",
        "href": "events/thing_deleted{?kind,vendor}",
        "subprotocol": "sse",
        "htv:headers": [{"description": "ID of the last event received, to resume after it", "htv:fieldName": "Last-Event-ID"}],
        "contentType": "text/event-stream",
        "response": {"contentType": "text/event-stream"},
        "additionalResponses": [
          {"description": "Invalid query arguments or Last-Event-ID", "contentType": "application/problem+json", "htv:statusCodeValue": 400},
          {"description": "The events after Last-Event-ID are no longer held", "contentType": "application/problem+json", "htv:statusCodeValue": 410}
        ]
      }]
    }
  }
}
`

// directoryTD renders the directory's TD for a base URL. The base ends in a slash so the
// relative hrefs resolve below it.
func directoryTD(baseURL, version string) ([]byte, error) {
	base, err := json.Marshal(strings.TrimSuffix(baseURL, "/") + "/")
	if err != nil {
		return nil, err
	}
	ver, err := json.Marshal(version)
	if err != nil {
		return nil, err
	}
	socket, err := lmosSocketHref(baseURL)
	if err != nil {
		return nil, err
	}
	doc := strings.NewReplacer("{{BASE}}", string(base), "{{VERSION}}", string(ver), "{{LMOS}}", string(socket)).Replace(directoryTDTemplate)
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(doc)); err != nil {
		return nil, err
	}
	return compact.Bytes(), nil
}

// lmosSocketHref is the JSON string of the gateway's WebSocket URL: the base URL with ws for
// http and wss for https, and /lmos below its path. A relative href cannot express it, as
// it would resolve to the base's http(s) scheme.
func lmosSocketHref(baseURL string) ([]byte, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, err
	}
	socket := url.URL{Scheme: "ws", Host: u.Host, Path: strings.TrimSuffix(u.Path, "/") + "/lmos"}
	if strings.EqualFold(u.Scheme, "https") {
		socket.Scheme = "wss"
	}
	return json.Marshal(socket.String() + "{?consumer,session}")
}

func (s *Server) getDirectoryTD(c *echo.Context) error {
	return writeBody(c, http.StatusOK, mediaTD, s.directoryTD)
}
