import sys

from tools.release.release import main

sys.exit(main())
