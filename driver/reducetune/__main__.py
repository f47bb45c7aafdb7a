import sys

from reducetune.cli import main

sys.exit(main())
