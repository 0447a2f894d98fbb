from ssdlab.cli.main import main

main()
