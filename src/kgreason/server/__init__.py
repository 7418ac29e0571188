"""`kgreason serve`: the HTTP API (and the MCP server) over kgreason's public API.

`service.Service` holds the warm state and the operations; the transports sit on top. This
package imports nothing heavy at import time; nothing under pog/, lkg/ or kg/ imports it."""
