import sys

from igg.interfaces.cli import main

sys.exit(main())
