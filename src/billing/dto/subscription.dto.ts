import { ApiProperty } from '@nestjs/swagger';
import { IntegerField } from '../../common/validation.js';

export class SetMonthlyCreditsDto {
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    maximum: 1_000_000_000,
    description: 'Credits per calendar month; applies to the current period at once.',
    example: 5000,
  })
  @IntegerField({ min: 0, max: 1_000_000_000, optional: false })
  monthly_credits: number;
}
