"""Results measured elsewhere, read into runs that the store keeps beside ssdlab's own
(store/imports.py): one module per format, each turning a file into an ImportedRun or
refusing it with a message that names the file and what to do.

- fio_json: fio 3.x's JSON output (json, json+, the client's client_stats).
"""
