// Package openapi holds the OpenAPI description of lmosdir's HTTP API.
package openapi

import _ "embed"

// Spec is openapi.yaml, served at /openapi.yaml.
//
//go:embed openapi.yaml
var Spec []byte
