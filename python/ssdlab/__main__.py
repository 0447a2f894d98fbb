from ssdlab.cli.main import app

app(prog_name="ssdlab")
