package lmos

// ValidJSON is validJSON, for the fuzz test against encoding/json.
var ValidJSON = validJSON
