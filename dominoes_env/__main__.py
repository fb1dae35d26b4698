from .cli import main
from .cli_support import end_program

if __name__ == "__main__":
    end_program(main())
